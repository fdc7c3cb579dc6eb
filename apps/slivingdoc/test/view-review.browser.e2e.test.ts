/**
 * The view's Proposals page in a real browser (Debian's Chromium through playwright-core, as
 * view.browser.e2e.test.ts): a notebook in queue mode, an agent's real stdio server proposing,
 * and `slivingdoc view` where a person approves and rejects. Hidden characters shown, an XSS
 * corpus in a proposal's path, file and message inert, the pending count live, a stale
 * revision refused, an agent token's session without Approve, Reject or Revert, and a removed
 * reviewer token's session ended at once.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, runBinOk, sandboxEnv } from './helpers/bin';
import { addToken, withConfigHome } from './helpers/http-hub';
import { McpServerProcess } from './helpers/mcp-server';
import {
  launchChromium,
  openPage,
  startViewProcess,
  stopViewProcess,
} from './helpers/view-browser';

const SLOW = { timeout: 120_000 };
const EVIL_PATH = 'notes/evil\u202eexe.md';
const EVIL_FILE =
  '# Evil\n\n<script>window.__pwned = 1</script>\n<img src=x onerror="window.__pwned=2">\nzero\u200bwidth\n';
const EVIL_MESSAGE =
  'agent edit\u200b <script>window.__pwned=3</script><img src=x onerror="window.__pwned=4">';

let env: NodeJS.ProcessEnv;
let person: string;
let ws: string;
let agent: McpServerProcess;
let view: ChildProcess;
let loginUrl: string;
let origin: string;
let browser: Browser;
const stderr: string[] = [];

const ok = (args: string[]): string => runBinOk(args, env);

function latest(): { generation: number; actor: string; message: string } {
  return JSON.parse(ok(['log', person, '--json', '--full', '-n', '1'])).publications[0];
}

/** The agent writes and commits through its stdio server: queued, it answers pending. */
async function propose(files: Record<string, string>, message: string): Promise<string> {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(ws, path, '..'), { recursive: true });
    writeFileSync(join(ws, path), text);
  }
  const answer = await agent.call('notes_commit', { message });
  expect(answer.structured, answer.text).toMatchObject({ status: 'pending' });
  return answer.structured.proposalId as string;
}

const login = (context: BrowserContext, url = loginUrl): Promise<Page> => openPage(context, url);

/** A form POST with a session's cookie, from the view's own origin. */
async function post(page: Page, path: string, form: Record<string, string>) {
  const cookie = (await page.context().cookies())[0]!;
  const response = await fetch(`${origin}${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: {
      Origin: origin,
      Cookie: `sld_view=${cookie.value}`,
      'Content-Type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams(form).toString(),
  });
  return { status: response.status, text: await response.text() };
}

beforeAll(async () => {
  assertBuilt();
  env = withConfigHome(sandboxEnv({ SLIVINGDOC_ACTOR: 'viewer' }));
  const home = realpathSync(env.HOME!);
  person = join(home, 'person');
  ws = join(home, 'ws');
  mkdirSync(ws);
  ok(['pull', person]);
  writeFileSync(join(person, 'plan.md'), 'one\ntwo\nthree\n');
  ok(['commit', person, '-m', 'seed']);
  ok(['review', 'set', 'queue']);
  const agentEnv = { ...env };
  delete agentEnv.SLIVINGDOC_ACTOR;
  agent = await McpServerProcess.start(['--workspace-root', ws], agentEnv, 'bot');
  expect((await agent.call('notes_pull', {})).isError).toBe(false);

  ({ child: view, loginUrl } = await startViewProcess([], env, stderr));
  origin = new URL(loginUrl).origin;
  browser = await launchChromium();
}, SLOW.timeout);

afterAll(async () => {
  await browser?.close();
  await agent?.close();
  await stopViewProcess(view);
  expect(stderr.join('')).not.toContain('sld_');
});

describe('the Proposals page in Chromium', () => {
  it(
    'shows a proposal with its hidden characters, runs none of its XSS, counts it live, and refuses a stale revision',
    SLOW,
    async () => {
      const context = await browser.newContext();
      const home = await login(context);
      await expect(home.locator('[data-live="pending"]').textContent()).resolves.toBe(
        '(0 pending)',
      );
      const dialogs: string[] = [];
      home.on('dialog', (dialog) => {
        dialogs.push(dialog.message());
        void dialog.dismiss();
      });
      const id = await propose(
        { 'plan.md': 'one\nTWO\u200b\nthree\n', [EVIL_PATH]: EVIL_FILE },
        EVIL_MESSAGE,
      );
      // The open page's count follows without a reload.
      await expect
        .poll(() => home.locator('[data-live="pending"]').textContent(), { timeout: 30_000 })
        .toBe('(1 pending)');

      const page = await context.newPage();
      page.on('dialog', (dialog) => {
        dialogs.push(dialog.message());
        void dialog.dismiss();
      });
      await page.goto(`${origin}/proposals`);
      await expect(
        page.locator('table.proposals tbody tr').first().textContent(),
      ).resolves.toContain(id);
      await page.goto(`${origin}/proposals/${id}`);
      const text = (await page.locator('main').textContent()) ?? '';
      expect(text).toContain('TWO⟨U+200B⟩');
      expect(text).toContain('notes/evil⟨U+202E⟩exe.md');
      expect(text).toContain('agent edit⟨U+200B⟩ <script>');
      expect(text).toContain('zero⟨U+200B⟩width');
      expect(await page.locator('main .invisible').count()).toBeGreaterThanOrEqual(4);
      // Nothing the agent wrote is active.
      expect(await page.locator('main script, main img, main [onerror]').count()).toBe(0);
      expect(
        await page.evaluate(() => (window as unknown as { __pwned?: unknown }).__pwned),
      ).toBeUndefined();
      expect(dialogs).toEqual([]);
      // What approving would change at the head: both files, no conflict.
      await expect(page.locator('[data-live="preview"] h2').textContent()).resolves.toContain(
        'revision 1',
      );
      expect(await page.locator('[data-live="preview"] section.file').count()).toBe(2);

      // The agent revises while the page shows revision 1: approving revision 1 is refused.
      const csrf = await page.locator('input[name="csrf"]').first().inputValue();
      await propose({ 'plan.md': 'one\nTWO\u200b\nthree\nfour\n' }, EVIL_MESSAGE);
      const stale = await post(page, `/proposals/${id}/approve`, { csrf, revision: '1' });
      expect(stale.status).toBe(409);
      expect(stale.text).toContain('STALE_REVISION');
      expect(stale.text).toContain('revision 2');
      expect(latest().message).toBe('seed'); // nothing published

      // Approve revision 2 by the button: published once, authored by the agent, approved by the viewer.
      await page.goto(`${origin}/proposals/${id}`);
      await page.getByRole('button', { name: 'Approve revision 2' }).click();
      await page.waitForURL(`${origin}/proposals/${id}`);
      await expect(page.locator('p.status').textContent()).resolves.toContain('Approved by viewer');
      const published = latest();
      expect(published.actor).toBe('bot');
      expect(published.message).toContain('Approved-by: viewer');
      await page.locator('p.status a').click();
      await expect(page.locator('p.approval').textContent()).resolves.toContain(
        'Approved by viewer',
      );
      await page.goto(`${origin}/history`);
      await expect(page.locator('table.history tbody tr').first().textContent()).resolves.toContain(
        'approved by viewer',
      );
      await expect(page.locator('[data-live="pending"]').textContent()).resolves.toBe(
        '(0 pending)',
      );
      await context.close();
    },
  );

  it(
    "gives an agent token's session no Approve, Reject or Revert under review; a reviewer rejects, and removing its token ends its session",
    SLOW,
    async () => {
      const botToken = addToken(env, 'bot-token');
      const reviewer = addToken(env, 'ann', '--reviewer');
      const id = await propose({ 'plan.md': 'one\nTWO\u200b\nthree\nfour\nfive\n' }, 'another');

      const agentContext = await browser.newContext();
      const agentPage = await login(agentContext, `${origin}/proposals/${id}?token=${botToken}`);
      await expect(agentPage.locator('main').textContent()).resolves.toContain(
        "Only a person's session approves or rejects",
      );
      expect(await agentPage.getByRole('button').count()).toBe(0);
      await agentPage.goto(`${origin}/publications/${latest().generation}`);
      expect(await agentPage.getByRole('button', { name: /Revert/ }).count()).toBe(0);
      await expect(agentPage.locator('main').textContent()).resolves.toContain('under review');
      const forged = await post(agentPage, `/proposals/${id}/approve`, {
        csrf: 'guessed',
        revision: '1',
      });
      expect(forged.status).toBe(403);
      expect(forged.text).toContain('CSRF check failed');
      // The agent's own session token passes the CSRF check and is still refused: while review
      // is briefly direct, its Revert form shows that token; under review it decides nothing.
      ok(['review', 'set', 'direct']);
      const revertForm = agentPage.locator('form[action$="/revert"] input[name="csrf"]');
      await expect
        .poll(
          async () => {
            await agentPage.reload();
            return revertForm.count();
          },
          { timeout: 30_000 },
        )
        .toBe(1);
      const csrf = (await revertForm.getAttribute('value'))!;
      ok(['review', 'set', 'queue']);
      for (const action of ['approve', 'reject']) {
        const refused = await post(agentPage, `/proposals/${id}/${action}`, {
          csrf,
          revision: '1',
          reason: 'by the agent',
        });
        expect(refused.status).toBe(403);
        expect(refused.text).toContain('Only a person’s session approves or rejects');
      }
      const revert = await post(agentPage, `/publications/${latest().generation}/revert`, { csrf });
      expect(revert.status).toBe(403);
      expect(revert.text).toContain('The notebook is under review');
      expect(JSON.parse(ok(['proposals', 'show', id, '--json']))).toMatchObject({ state: 'open' });

      const annContext = await browser.newContext();
      const ann = await login(annContext, `${origin}/proposals/${id}?token=${reviewer}`);
      await ann.getByLabel('Reason (the agent reads it)').fill('not\u200b now');
      await ann.getByRole('button', { name: 'Reject revision 1' }).click();
      await ann.waitForURL(`${origin}/proposals/${id}`);
      await expect(ann.locator('p.status').textContent()).resolves.toContain('Rejected by ann');
      await expect(ann.locator('p.status q').textContent()).resolves.toBe('not⟨U+200B⟩ now');
      const shown = JSON.parse(ok(['proposals', 'show', id, '--json']));
      expect(shown).toMatchObject({ state: 'rejected', decision: { by: 'ann' } });
      expect(latest().message).not.toContain('another');

      // The token leaves the token file: its open session ends at the next request.
      ok(['token', 'remove', 'ann']);
      const after = await ann.goto(`${origin}/proposals`);
      expect(after!.status()).toBe(401);
      await expect(ann.locator('main').textContent()).resolves.toContain('session ended');
      await agentContext.close();
      await annContext.close();
    },
  );

  it(
    'an approval that conflicts publishes nothing and keeps the proposal open; of two reviewers, the second is told who decided',
    SLOW,
    async () => {
      // The agent's next call learns the earlier rejection; then it proposes line 4.
      expect((await agent.call('notes_pull', {})).isError).toBe(false);
      const id = await propose({ 'plan.md': 'one\nTWO\u200b\nthree\nFOUR by the agent\n' }, 'four');
      // A person changes the same line first.
      ok(['pull', person]);
      writeFileSync(join(person, 'plan.md'), 'one\nTWO\u200b\nthree\nFOUR by a person\n');
      ok(['commit', person, '-m', 'person four']);
      const before = latest();

      const context = await browser.newContext();
      const printed = new URL(loginUrl).searchParams.get('token');
      const page = await login(context, `${origin}/proposals/${id}?token=${printed}`);
      await expect(page.locator('[data-live="preview"]').textContent()).resolves.toContain(
        'Approving now would conflict',
      );
      const revision = await page.locator('input[name="revision"]').first().inputValue();
      await page.getByRole('button', { name: `Approve revision ${revision}` }).click();
      await expect(page.locator('.alert[role="alert"]').textContent()).resolves.toMatch(
        /nothing was published and the proposal stays open[\s\S]*plan\.md: TEXT_CONFLICT, lines \d+–\d+/,
      );
      expect(latest()).toEqual(before);
      expect(JSON.parse(ok(['proposals', 'show', id, '--json']))).toMatchObject({ state: 'open' });

      // A second reviewer has the page open; the first rejects; the second's approval is told.
      const bea = addToken(env, 'bea', '--reviewer');
      const second = await browser.newContext();
      const beaPage = await login(second, `${origin}/proposals/${id}?token=${bea}`);
      const beaCsrf = await beaPage.locator('input[name="csrf"]').first().inputValue();
      await page.goto(`${origin}/proposals/${id}`);
      await page.getByLabel('Reason (the agent reads it)').fill('conflicts with the person');
      await page.getByRole('button', { name: `Reject revision ${revision}` }).click();
      await page.waitForURL(`${origin}/proposals/${id}`);
      const late = await post(beaPage, `/proposals/${id}/approve`, { csrf: beaCsrf, revision });
      expect(late.status).toBe(409);
      expect(late.text).toContain('PROPOSAL_DECIDED');
      expect(late.text).toContain('was already rejected by &quot;viewer&quot;');
      expect(latest()).toEqual(before);
      await context.close();
      await second.close();
    },
  );
});
