/**
 * The web view in a real browser: Debian's Chromium driven by playwright-core (installed by
 * tooling/browser/install-chromium.sh; never downloaded). A notebook written by three actors
 * (alice and bob on the CLI, claude-code through MCP) across a checkpoint boundary is served
 * by `slivingdoc view`; every page is checked against the store's own history as `log` and
 * `blame` report it. Also: live updates from another process, revert (clean and conflicting),
 * a read-only token, an XSS corpus, CSRF and foreign Host/Origin, axe-core, and screenshots.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { addToken, defaultTokenFilePath } from '@slivingdoc/http';
import axe from 'axe-core';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, bin, runBinOk, sandboxEnv } from './helpers/bin';
import { McpServerProcess } from './helpers/mcp-server';
import {
  launchChromium,
  openPage,
  startViewProcess,
  stopViewProcess,
} from './helpers/view-browser';

const SCREENSHOTS = join(import.meta.dirname, '../../../docs/view');
const SLOW = { timeout: 300_000 };

interface Publication {
  generation: number;
  time: string;
  actor: string;
  subject: string;
  message: string;
  files?: { path: string; insertions: number; deletions: number }[] | null;
}

let env: NodeJS.ProcessEnv;
let base: string;
let view: ChildProcess;
let loginUrl: string;
let origin: string;
let browser: Browser;
const stderr: string[] = [];

const ok = (args: string[]): string => runBinOk(args, env);

function log(): Publication[] {
  const out = JSON.parse(ok(['log', join(base, 'alice'), '--stat', '-n', '1000', '--json']));
  return out.publications as Publication[];
}

/** alice (CLI) writes and commits. */
function alice(files: Record<string, string>, message: string): void {
  const dir = join(base, 'alice');
  ok(['pull', dir]);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  ok(['commit', dir, '-m', message, '--actor', 'alice']);
}

function bob(files: Record<string, string>, message: string): void {
  const dir = join(base, 'bob');
  ok(['pull', dir]);
  for (const [path, text] of Object.entries(files)) writeFileSync(join(dir, path), text);
  ok(['commit', dir, '-m', message, '--actor', 'bob']);
}

async function agent(files: Record<string, string>, message: string): Promise<void> {
  const dir = join(base, 'claude');
  mkdirSync(dir, { recursive: true });
  const server = await McpServerProcess.start(['--workspace-root', dir], env, 'claude-code');
  try {
    expect((await server.call('notes_pull', {})).isError).toBe(false);
    for (const [path, text] of Object.entries(files)) writeFileSync(join(dir, path), text);
    expect((await server.call('notes_commit', { message })).isError).toBe(false);
  } finally {
    await server.close();
  }
  // Its checkpoint (if one was due) ran before it exited.
  await sleep(200);
}

const LONG = Array.from({ length: 200 }, (_, i) => `line ${i + 1}`).join('\n');

/** The XSS corpus: each file tries to run script, fetch something or restyle the page. */
const XSS: Record<string, string> = {
  'xss/script.md':
    '# Script\n\n<script>window.__pwned = "script"</script>\n\n<img src=x onerror="window.__pwned=\'onerror\'">\n',
  'xss/links.md':
    '# Links\n\n[click](javascript:window.__pwned=1) [data](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==) [vb](vbscript:msgbox)\n\n[https://good.example](https://evil.example/steal) <javascript:alert(1)>\n\n[ref][r]\n\n[r]: javascript:alert(1)\n',
  'xss/images.md':
    '# Images\n\n![track](http://127.0.0.9:9/pixel.png) ![svg](data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+)\n',
  'xss/frames.md':
    '# Frames\n\n<iframe src="https://evil.example"></iframe><object data="x"></object><embed src="x">\n',
  'xss/style.md':
    '# Style\n\n<style>body{background:url(http://127.0.0.9:9/css)}</style><div style="background:url(http://127.0.0.9:9/inline)">x</div>\n',
  'xss/vector.svg':
    '<svg xmlns="http://www.w3.org/2000/svg" onload="window.__pwned=1"><script>window.__pwned=2</script></svg>\n',
  'xss/page.html':
    '<html><body onload="window.__pwned=1"><script>window.__pwned=2</script></body></html>\n',
  'xss/escape.md':
    '# Escape\n\n`</code><script>window.__pwned=3</script>`\n\n<a href="javascript:alert(1)" onclick="window.__pwned=4">raw</a>\n',
};

/** Starts `slivingdoc view` and reads its one line. */
async function startView(): Promise<void> {
  ({ child: view, loginUrl } = await startViewProcess(['--actor', 'viewer'], env, stderr));
  expect(loginUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?token=sld_[A-Za-z0-9_-]{43}$/);
  origin = new URL(loginUrl).origin;
}

/** A page that records CSP violations, dialogs and every request it makes. */
async function watchedPage(context: BrowserContext) {
  const page = await context.newPage();
  const requests: string[] = [];
  const dialogs: string[] = [];
  const consoleErrors: string[] = [];
  page.on('request', (req) => requests.push(req.url()));
  page.on('dialog', (dialog) => {
    dialogs.push(dialog.message());
    void dialog.dismiss();
  });
  page.on('console', (message) => {
    if (message.type() === 'error') consoleErrors.push(message.text());
  });
  await page.addInitScript(() => {
    const w = window as unknown as { __csp: string[] };
    w.__csp = [];
    document.addEventListener('securitypolicyviolation', (event) => {
      w.__csp.push(`${event.violatedDirective} ${event.blockedURI}`);
    });
  });
  return { page, requests, dialogs, consoleErrors };
}

const login = (context: BrowserContext, url = loginUrl): Promise<Page> => openPage(context, url);

async function axeViolations(page: Page): Promise<string[]> {
  // evaluate() runs through the DevTools protocol, outside the page's CSP.
  await page.evaluate(axe.source);
  const result = await page.evaluate(async () => {
    const run = (window as unknown as { axe: typeof axe }).axe.run;
    return run(document, { resultTypes: ['violations'] });
  });
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

/** A raw HTTP request (Host and Origin as given; fetch would not let us forge Host). */
function raw(
  method: string,
  path: string,
  headers: Record<string, string>,
  body = '',
): Promise<{ status: number; text: string }> {
  const url = new URL(origin);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        method,
        path,
        headers: { ...headers, 'Content-Length': Buffer.byteLength(body) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

beforeAll(async () => {
  assertBuilt();
  env = sandboxEnv({ SLIVINGDOC_CHECKPOINT_PACKS: '3', SLIVINGDOC_RETAINED_CHECKPOINTS: '1' });
  env.XDG_CONFIG_HOME = join(env.HOME as string, 'config');
  base = realpathSync(mkdtempSync(join(tmpdir(), 'slivingdoc-test-view-')));
  mkdirSync(SCREENSHOTS, { recursive: true });

  // 1–3 are compacted by the checkpoints, 4 is the boundary, 5–8 keep their changes.
  alice({ 'plan.md': '# Plan\n\ngoal\nsteps\n' }, 'Plan');
  await agent({ 'plan.md': '# Plan\n\ngoal\nagent idea\nsteps\n' }, 'Agent idea');
  bob({ 'data.txt': `${LONG}\n` }, 'Data');
  alice({ 'notes/today.md': '- [x] one\n- [ ] two\n' }, 'Notes');
  alice(
    { 'plan.md': '# Plan\n\ngoal\nagent idea\nsteps done\n' },
    'Steps done\n\nA longer body\nover two lines.',
  );
  await agent({ 'plan.md': '# Plan\n\ngoal\nagent idea\nsteps done\nagent line\n' }, 'Agent line');
  bob({ 'plan.md': '# Plan\n\nGOAL\nagent idea\nsteps done\nagent line\n' }, 'Goal in capitals');
  alice(XSS, 'XSS corpus');

  await startView();
  browser = await launchChromium();
}, SLOW.timeout);

afterAll(async () => {
  await browser?.close();
  await stopViewProcess(view);
  // Nothing the view printed or logged names a token, an object id or the private root.
  const logged = stderr.join('');
  expect(logged).not.toMatch(/[0-9a-f]{40}/);
  expect(logged).not.toContain('sld_');
});

describe('slivingdoc view in Chromium', () => {
  it(
    'logs in with the printed token: an HttpOnly SameSite=Strict cookie, no token in the URL',
    SLOW,
    async () => {
      const context = await browser.newContext();
      const page = await login(context);
      expect(page.url()).toBe(`${origin}/`);
      const [cookie] = await context.cookies();
      expect(cookie).toMatchObject({ name: 'sld_view', httpOnly: true, sameSite: 'Strict' });
      expect(cookie!.value).not.toContain(new URL(loginUrl).searchParams.get('token'));
      // No cookie, no page; a wrong token is refused without echoing it.
      expect((await raw('GET', '/history', { Host: new URL(origin).host })).status).toBe(401);
      const wrong = await raw('GET', '/?token=sld_wrong', { Host: new URL(origin).host });
      expect(wrong.status).toBe(401);
      expect(wrong.text).not.toContain('sld_wrong');
      await context.close();
    },
  );

  it('shows each page as the store’s own history says, with screenshots', SLOW, async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await login(context);
    const history = log();

    // /: the tree at the accepted generation.
    const files = await page.locator('nav.tree a').allTextContents();
    expect(files.sort()).toEqual(
      ['data.txt', 'plan.md', 'today.md', ...Object.keys(XSS).map((p) => p.split('/')[1]!)].sort(),
    );
    await page.screenshot({ path: join(SCREENSHOTS, 'index.png') });

    // /files: Markdown rendered; other text with line numbers; an older retained generation.
    await page.goto(`${origin}/files/plan.md`);
    await expect(page.locator('article.markdown h1').textContent()).resolves.toBe('Plan');
    await expect(page.locator('article.markdown').textContent()).resolves.toContain('GOAL');
    await page.screenshot({ path: join(SCREENSHOTS, 'file.png') });
    await page.goto(`${origin}/files/data.txt`);
    expect(await page.locator('table.lines tr').count()).toBe(200);
    expect(await page.locator('table.lines tr').nth(41).locator('td').allTextContents()).toEqual([
      '42',
      'line 42',
    ]);
    const steps = history.find((p) => p.subject === 'Steps done')!;
    await page.goto(`${origin}/files/plan.md?at=${steps.generation}`);
    await expect(page.locator('article.markdown').textContent()).resolves.toContain('steps done');
    await expect(page.locator('article.markdown').textContent()).resolves.not.toContain(
      'agent line',
    );

    // /history: newest first, as log lists them, with the checkpoint boundary.
    await page.goto(`${origin}/history`);
    const rows = page.locator('table.history tbody tr:not(.boundary)');
    const shown = await rows.evaluateAll((trs) =>
      trs.map((tr) =>
        Array.from(tr.querySelectorAll('td')).map((td) => td.textContent?.trim() ?? ''),
      ),
    );
    expect(shown.map((cells) => [Number(cells[0]), cells[2], cells[3]])).toEqual(
      history.map((p) => [p.generation, p.actor, p.subject]),
    );
    // The boundary follows the oldest retained publication (the oldest checkpoint's head).
    await expect(page.locator('table.history tbody tr').last().textContent()).resolves.toContain(
      `Checkpoint boundary: the history before generation ${history.at(-1)!.generation}`,
    );
    expect(history.some((p) => p.subject === 'Plan')).toBe(false); // compacted away
    await page.screenshot({ path: join(SCREENSHOTS, 'history.png'), fullPage: true });
    // Filters: by actor, by path.
    await page.getByLabel('Actor').fill('bob');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/actor=bob/);
    const bobRows = await page
      .locator('table.history tbody tr:not(.boundary) td:nth-child(3)')
      .allTextContents();
    expect(bobRows).toEqual(history.filter((p) => p.actor === 'bob').map((p) => p.actor));
    await page.goto(`${origin}/history?path=notes`);
    const notesRows = await page
      .locator('table.history tbody tr:not(.boundary) td:nth-child(4)')
      .allTextContents();
    expect(notesRows).toEqual(['Notes']);

    // /publications/N: the whole message, actor, numbered diff.
    await page.goto(`${origin}/publications/${steps.generation}`);
    await expect(page.locator('pre.message').textContent()).resolves.toBe(
      'Steps done\n\nA longer body\nover two lines.',
    );
    await expect(page.locator('article.member h2').textContent()).resolves.toBe('alice');
    const added = await page
      .locator('section.file', { hasText: 'plan.md' })
      .locator('tr.added td')
      .allTextContents();
    expect(added).toEqual(['', '5', 'added: +steps done']);
    const removed = await page
      .locator('section.file', { hasText: 'plan.md' })
      .locator('tr.removed td')
      .allTextContents();
    expect(removed).toEqual(['5', '', 'removed: -steps']);
    await page.screenshot({ path: join(SCREENSHOTS, 'publication.png'), fullPage: true });

    // /blame: the same attribution as the CLI's.
    const cli = JSON.parse(ok(['blame', join(base, 'alice'), 'plan.md', '--json'])) as {
      lines: {
        line: number;
        publication: { generation: number; actor: string } | null;
        before: number | null;
      }[];
    };
    await page.goto(`${origin}/blame/plan.md`);
    const blameRows = await page
      .locator('table.blame tbody tr')
      .evaluateAll((trs) =>
        trs.map((tr) => tr.querySelector('td.who')?.textContent?.replace(/\s+/g, ' ').trim() ?? ''),
      );
    let last = '';
    const expected = cli.lines.map((line) => {
      const label =
        line.publication === null
          ? `before generation ${line.before}`
          : `generation ${line.publication.generation} ${line.publication.actor}`;
      const shownLabel = label === last ? '' : label;
      last = label;
      return shownLabel;
    });
    expect(blameRows.map((text) => text.replace(/ · .*$/, ''))).toEqual(expected);
    await page.screenshot({ path: join(SCREENSHOTS, 'blame.png'), fullPage: true });

    // Narrow screens: readable at 360 px, nothing wider than the viewport.
    await page.setViewportSize({ width: 360, height: 740 });
    await page.goto(`${origin}/files/plan.md`);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(
      360,
    );
    await page.screenshot({ path: join(SCREENSHOTS, 'narrow.png'), fullPage: true });
    await context.close();
  });

  it(
    'passes axe-core with no serious or critical violation on every page, in both schemes, and works by keyboard',
    SLOW,
    async () => {
      for (const colorScheme of ['light', 'dark'] as const) {
        const context = await browser.newContext({ colorScheme });
        const page = await login(context);
        const generation = log()[0]!.generation;
        for (const path of [
          '/',
          '/files/plan.md',
          '/files/data.txt',
          '/history',
          `/publications/${generation}`,
          '/blame/plan.md',
        ]) {
          await page.goto(`${origin}${path}`);
          expect(await axeViolations(page), `${colorScheme} ${path}`).toEqual([]);
        }
        if (colorScheme === 'dark') await page.screenshot({ path: join(SCREENSHOTS, 'dark.png') });
        await context.close();
      }

      // The keyboard alone: the skip link first, then the navigation; the filters by label;
      // the revert button reachable by Tab and labelled by what it does.
      const context = await browser.newContext();
      const page = await login(context);
      const focused = () => page.evaluate(() => document.activeElement?.textContent?.trim() ?? '');
      await page.keyboard.press('Tab');
      expect(await focused()).toBe('Skip to content');
      await page.keyboard.press('Enter');
      // The fragment navigation completes after the key press returns: wait for it.
      await page.waitForURL(`${origin}/#content`);
      await page.goto(`${origin}/history`);
      await page.keyboard.press('Tab');
      await page.keyboard.press('Tab');
      expect(await focused()).toBe('Files');
      await page.keyboard.press('Tab');
      expect(await focused()).toBe('History');
      await page.getByLabel('Actor').focus();
      await page.keyboard.type('claude-code');
      await page.keyboard.press('Enter');
      await page.waitForURL(/actor=claude-code/);
      const generation = log().find((p) => p.actor === 'claude-code')!.generation;
      await page.goto(`${origin}/publications/${generation}`);
      let reached = '';
      for (let i = 0; i < 20 && !reached.startsWith('Revert'); i += 1) {
        await page.keyboard.press('Tab');
        reached = await focused();
      }
      expect(reached).toBe(`Revert generation ${generation}`);
      await context.close();
    },
  );

  it(
    'runs nothing from the XSS corpus, sends no request elsewhere and raises no CSP report',
    SLOW,
    async () => {
      const context = await browser.newContext();
      await login(context);
      const { page, requests, dialogs } = await watchedPage(context);
      for (const path of Object.keys(XSS)) {
        await page.goto(`${origin}/files/${path}`);
        await page.waitForLoadState('networkidle');
        expect(
          await page.evaluate(() => (window as unknown as { __pwned?: unknown }).__pwned),
          path,
        ).toBeUndefined();
        expect(
          await page.evaluate(() => (window as unknown as { __csp: string[] }).__csp),
          path,
        ).toEqual([]);
        // Nothing active survived the rendering.
        expect(
          await page
            .locator(
              'main script, main iframe, main object, main embed, main svg, main style, main img, main [style]',
            )
            .count(),
          path,
        ).toBe(0);
        const hrefs = await page
          .locator('main a[href]')
          .evaluateAll((as) => as.map((a) => a.getAttribute('href') ?? ''));
        for (const href of hrefs)
          expect(href, path).not.toMatch(/^\s*(javascript|data|vbscript):/i);
      }
      // The link trick shows the real target.
      await page.goto(`${origin}/files/xss/links.md`);
      await expect(page.locator('article.markdown').textContent()).resolves.toContain(
        '(https://evil.example/steal)',
      );
      await page.goto(`${origin}/publications/${log()[0]!.generation}`);
      expect(
        await page.evaluate(() => (window as unknown as { __pwned?: unknown }).__pwned),
      ).toBeUndefined();
      expect(dialogs).toEqual([]);
      for (const url of requests) expect(new URL(url).origin).toBe(origin);
      await context.close();
    },
  );

  it(
    'reverts from the publication page: clean publishes as the viewer, a conflict publishes nothing',
    SLOW,
    async () => {
      const context = await browser.newContext();
      const page = await login(context);
      const history = log();
      // Conflicting first (nothing new published yet): "Steps done" changed the line next to
      // the one "Agent line" added later, so its inverse conflicts; nothing is published.
      const steps = history.find((p) => p.subject === 'Steps done')!;
      await page.goto(`${origin}/publications/${steps.generation}`);
      await page.getByRole('button', { name: `Revert generation ${steps.generation}` }).click();
      await expect(page.locator('.alert[role="alert"]').textContent()).resolves.toMatch(
        /plan\.md: TEXT_CONFLICT, lines \d+–\d+/,
      );
      await page.screenshot({ path: join(SCREENSHOTS, 'revert-conflict.png'), fullPage: true });
      expect(log()[0]).toEqual(history[0]); // nothing published

      // Clean: nothing changed the XSS corpus since; the revert is published as the viewer.
      const corpus = history.find((p) => p.subject === 'XSS corpus')!;
      await page.goto(`${origin}/publications/${corpus.generation}`);
      await page.getByRole('button', { name: `Revert generation ${corpus.generation}` }).click();
      await page
        .waitForURL(/\/publications\/\d+\?reverted=/, { timeout: 60_000 })
        .catch(async (error) => {
          throw new Error(`${error}: ${await page.locator('main').textContent()}`);
        });
      const [latest] = log();
      expect(latest).toMatchObject({
        actor: 'viewer',
        message: `Revert generation ${corpus.generation}: XSS corpus`,
      });
      expect(page.url()).toBe(
        `${origin}/publications/${latest!.generation}?reverted=${corpus.generation}`,
      );
      await expect(page.locator('.alert.ok').textContent()).resolves.toContain(
        `generation ${corpus.generation}`,
      );
      await context.close();
    },
  );

  it(
    'updates an open page when another process publishes, keeping the reader’s place',
    SLOW,
    async () => {
      const context = await browser.newContext({ viewport: { width: 1000, height: 600 } });
      const page = await login(context, `${loginUrl.replace('/?', '/files/data.txt?')}`);
      await page.evaluate(() => window.scrollTo(0, 1500));
      const before = await page.evaluate(() => window.scrollY);
      expect(before).toBeGreaterThan(1000);
      const history = await context.newPage();
      await history.goto(`${origin}/history`);
      bob({ 'data.txt': `${LONG.replace('line 1\n', 'line one (edited)\n')}\n` }, 'Edit data');
      const published = log()[0]!;
      expect(published.subject).toBe('Edit data');
      await expect
        .poll(() => page.locator('table.lines tr').first().textContent(), { timeout: 60_000 })
        .toBe('1line one (edited)');
      expect(await page.evaluate(() => window.scrollY)).toBe(before);
      await expect
        .poll(
          () => history.locator('table.history tbody tr td:nth-child(4)').first().textContent(),
          { timeout: 60_000 },
        )
        .toBe('Edit data');
      await expect(page.locator('#live-status').textContent()).resolves.toContain(`generation`);
      await context.close();
    },
  );

  it(
    'gives a read-only token no revert, and refuses forged, cross-site and foreign-host requests',
    SLOW,
    async () => {
      const reader = addToken(defaultTokenFilePath(env, env.HOME), 'reader', { readOnly: true });
      const context = await browser.newContext();
      const page = await login(context, `${origin}/?token=${reader}`);
      expect(page.url()).toBe(`${origin}/`);
      const generation = log()[0]!.generation;
      await page.goto(`${origin}/publications/${generation}`);
      expect(await page.getByRole('button', { name: /Revert/ }).count()).toBe(0);
      const cookie = (await context.cookies())[0]!;
      const host = new URL(origin).host;
      const headers = {
        Host: host,
        Cookie: `sld_view=${cookie.value}`,
        'Content-Type': 'application/x-www-form-urlencoded',
      };
      // A read-only session posting a revert (even with a guessed form) is refused.
      expect(
        (
          await raw(
            'POST',
            `/publications/${generation}/revert`,
            { ...headers, Origin: origin },
            'csrf=x',
          )
        ).status,
      ).toBe(403);

      // A write session: no CSRF token, a wrong one, no Origin, a foreign Origin, a foreign Host.
      const writer = await browser.newContext();
      await login(writer);
      const session = `sld_view=${(await writer.cookies())[0]!.value}`;
      const w = { ...headers, Cookie: session };
      for (const [why, extra, body] of [
        ['no csrf', { Origin: origin }, ''],
        ['wrong csrf', { Origin: origin }, 'csrf=forged'],
        ['no origin', {}, 'csrf=forged'],
        ['foreign origin', { Origin: 'http://evil.example' }, 'csrf=forged'],
      ] as const) {
        const answer = await raw(
          'POST',
          `/publications/${generation}/revert`,
          { ...w, ...extra },
          body,
        );
        expect(answer.status, why).toBe(403);
      }
      expect(
        (await raw('GET', '/', { ...w, Host: `evil.example:${new URL(origin).port}` })).status,
      ).toBe(403);
      expect((await raw('GET', '/', { ...w, Origin: 'http://evil.example' })).status).toBe(403);
      expect(log()[0]!.generation).toBe(generation); // nothing published
      // Every answer carries the security headers.
      const response = await page.goto(`${origin}/history`);
      const h = response!.headers();
      expect(h['content-security-policy']).toContain("frame-ancestors 'none'");
      expect(h['content-security-policy']).toContain("default-src 'self'");
      expect(h['content-security-policy']).not.toContain('unsafe-inline');
      expect(h['x-content-type-options']).toBe('nosniff');
      // No object id, storage key, private path or credential in any page.
      for (const path of [
        '/',
        '/history',
        `/publications/${generation}`,
        '/blame/plan.md',
        '/api/generation',
      ]) {
        const text = await (await page.goto(`${origin}${path}`))!.text();
        expect(text, path).not.toMatch(/[0-9a-f]{40}/);
        expect(text, path).not.toContain(base);
        expect(text, path).not.toContain(env.HOME as string);
        expect(text, path).not.toMatch(/packs\/|\.pack\b|sld_/);
      }
      await context.close();
      await writer.close();
    },
  );

  it(
    'is served by serve --listen at / beside /mcp, a token of the token file logging in',
    SLOW,
    async () => {
      const token = addToken(defaultTokenFilePath(env, env.HOME), 'hub-reader', { readOnly: true });
      const hub = spawn(process.execPath, [bin, 'serve', '--listen', '127.0.0.1:0'], { env });
      try {
        const url = await new Promise<string>((resolve, reject) => {
          let err = '';
          hub.stderr?.on('data', (chunk: Buffer) => {
            err += chunk.toString('utf8');
            const found = /"url":"(http:\/\/127\.0\.0\.1:\d+)\/mcp"/.exec(err);
            if (found) resolve(found[1] as string);
          });
          hub.once('exit', (code) => reject(new Error(`serve exited ${code}: ${err}`)));
        });
        const login = await fetch(`${url}/history?token=${token}`, { redirect: 'manual' });
        expect(login.status).toBe(303);
        expect(login.headers.get('location')).toBe('/history');
        const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0] as string;
        const page = await (await fetch(`${url}/history`, { headers: { cookie } })).text();
        for (const publication of log().slice(0, 3))
          expect(page).toContain(`<a href="/publications/${publication.generation}">`);
        // A read-only token: no revert form; /mcp still answers MCP's own refusal without a bearer.
        const latest = log()[0]!.generation;
        const detail = await (
          await fetch(`${url}/publications/${latest}`, { headers: { cookie } })
        ).text();
        expect(detail).not.toContain('/revert');
        expect((await fetch(`${url}/mcp`, { method: 'POST' })).status).toBe(401);
      } finally {
        hub.kill('SIGTERM');
        if (hub.exitCode === null) await new Promise((r) => hub.once('exit', r));
      }
    },
  );
});
