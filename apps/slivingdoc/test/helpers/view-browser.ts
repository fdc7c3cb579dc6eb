/**
 * What the view's browser suites share: Debian's Chromium (installed by
 * tooling/browser/install-chromium.sh, never downloaded) and one `slivingdoc view` process
 * whose single printed line is the login URL.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { bin } from './bin';

const CHROMIUM = '/usr/bin/chromium';

/** Launches Chromium headless, without sandbox, GPU or any traffic of its own. */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM))
    throw new Error(`${CHROMIUM} is missing: run bash tooling/browser/install-chromium.sh`);
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
      '--disable-sync',
    ],
  });
}

/**
 * Starts `slivingdoc view --listen 127.0.0.1:0 …args` and reads its one line; what it writes
 * to stderr is appended to `stderr`.
 */
export async function startViewProcess(
  args: string[],
  env: NodeJS.ProcessEnv,
  stderr: string[],
): Promise<{ child: ChildProcess; loginUrl: string }> {
  const child = spawn(process.execPath, [bin, 'view', '--listen', '127.0.0.1:0', ...args], {
    env,
  });
  child.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk.toString('utf8')));
  const loginUrl = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      if (out.includes('\n')) resolve(out.split('\n')[0] as string);
    });
    child.once('exit', (code) => reject(new Error(`view exited ${code}: ${stderr.join('')}`)));
  });
  return { child, loginUrl };
}

/** Stops the view with SIGTERM and waits for it to exit. */
export async function stopViewProcess(child: ChildProcess | undefined): Promise<void> {
  child?.kill('SIGTERM');
  if (child !== undefined && child.exitCode === null)
    await new Promise((resolve) => child.once('exit', resolve));
}

/** A new page of `context` at `url` (a login URL logs the page's session in). */
export async function openPage(context: BrowserContext, url: string): Promise<Page> {
  const page = await context.newPage();
  await page.goto(url);
  return page;
}
