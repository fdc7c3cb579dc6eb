/**
 * The random-kill soak's hub variant: one real `slivingdoc serve --listen` process
 * (the built bin) serves every writer as an MCP session over Streamable HTTP, each with its own
 * token and so its own directory. Killing "a writer's server" SIGKILLs the hub: every session
 * dies at once, and every writer reconnects to the restarted hub on the same directories.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { builtCliPath } from '../cli';
import {
  CALL_TIMEOUT_MS,
  callTool,
  type ServerLaunch,
  type SoakParticipant,
  type ToolAnswer,
} from './server';

const STDERR_TAIL = 8192;
const SLOW_DEATH_MS = 1000;

/** The hub process: started on demand by whichever session needs it first, killed by any. */
export class SoakHub {
  #child: ChildProcess | undefined;
  #url = '';
  #starting: Promise<void> | undefined;
  #stderrTail = '';
  /** Incremented by every kill: a session of an older generation is dead. */
  generation = 0;
  /** Calls in flight over all sessions (a kill is mid-call when any is). */
  inFlight = 0;
  #kills = 0;
  /** Times the hub went away without being killed. */
  unexpectedExits = 0;
  /**
   * Ends every session's client when the hub dies: the SDK's client would otherwise wait for
   * the answer of a call in flight (and try to resume its stream) until its timeout.
   */
  readonly #onDeath = new Set<() => void>();

  constructor(private readonly launch: ServerLaunch) {}

  get alive(): boolean {
    return this.#child !== undefined;
  }

  get url(): string {
    return this.#url;
  }

  lastLog(): string {
    return this.#stderrTail;
  }

  /** Starts the hub unless it runs; throws with the log tail when it does not come up. */
  async ensure(): Promise<void> {
    if (this.alive) return;
    this.#starting ??= this.#spawn().finally(() => {
      this.#starting = undefined;
    });
    await this.#starting;
  }

  async #spawn(): Promise<void> {
    const child = spawn(process.execPath, [builtCliPath(), 'serve', ...this.launch.args], {
      env: { PATH: process.env.PATH ?? '', ...this.launch.env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const generation = this.generation;
    // This process's own output: an earlier hub's records name an earlier port.
    let own = '';
    this.#url = await new Promise<string>((resolve, reject) => {
      child.stderr!.on('data', (chunk: Buffer) => {
        const text = chunk.toString('utf8');
        this.#stderrTail = (this.#stderrTail + text).slice(-STDERR_TAIL);
        own = (own + text).slice(-STDERR_TAIL);
        // The start-up record names the URL right before maxSessions (others may hold a url).
        const match = /"url":"(http:\/\/[^"]+)","maxSessions"/.exec(own);
        if (match) resolve(match[1]!);
      });
      child.once('exit', (code) => reject(new Error(`slivingdoc serve --listen exited ${code}`)));
    });
    child.once('exit', () => {
      if (this.#child !== child) return;
      this.#child = undefined;
      if (this.generation === generation) {
        this.unexpectedExits += 1;
        this.generation += 1;
        this.#died();
      }
    });
    this.#child = child;
  }

  /** SIGKILLs the hub (see the slow death below); returns whether a call was in flight. */
  kill(): { killed: boolean; midCall: boolean } {
    const child = this.#child;
    if (child === undefined) return { killed: false, midCall: false };
    this.#child = undefined;
    this.generation += 1;
    const midCall = this.inFlight > 0;
    // Every other kill is a slow death: stopped at once, SIGKILLed a second later, so the next
    // hub starts while its predecessor still holds its locks and claims, as one stuck in an
    // fsync on a busy disk does (CI found a restarted hub that gave up its shared database).
    this.#kills += 1;
    if (this.#kills % 2 === 0) {
      child.kill('SIGSTOP');
      setTimeout(() => child.kill('SIGKILL'), SLOW_DEATH_MS);
    } else child.kill('SIGKILL');
    this.#died();
    return { killed: true, midCall };
  }

  /** Registers what to do when the hub dies (once); returns how to unregister it. */
  onDeath(end: () => void): () => void {
    this.#onDeath.add(end);
    return () => this.#onDeath.delete(end);
  }

  #died(): void {
    const ends = [...this.#onDeath];
    this.#onDeath.clear();
    for (const end of ends) end();
  }

  async close(): Promise<void> {
    const child = this.#child;
    this.#child = undefined;
    if (child === undefined) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }
}

/** One writer's session of the hub, with the soak's server interface. */
export class HubSoakSession implements SoakParticipant {
  #client: Client | undefined;
  #generation = -1;

  constructor(
    private readonly hub: SoakHub,
    private readonly token: string,
    /** The first session reports the hub's unexpected exits (once, not once per writer). */
    private readonly reportsExits: boolean,
  ) {}

  get unexpectedExits(): number {
    return this.reportsExits ? this.hub.unexpectedExits : 0;
  }

  get running(): boolean {
    return this.#client !== undefined && this.hub.alive && this.#generation === this.hub.generation;
  }

  async start(): Promise<void> {
    await this.#client?.close().catch(() => undefined);
    this.#client = undefined;
    await this.hub.ensure();
    const generation = this.hub.generation;
    const client = new Client({ name: 'slivingdoc-kill-soak', version: '0.0.0' });
    // Registered before connecting: a hub killed after it sent the initialize answer's stream
    // headers but not the answer leaves the SDK's client waiting until its timeout otherwise
    // (initialize reads the review setting from the store, so that window is real).
    const stopWatching = this.hub.onDeath(() => {
      if (this.#client === client) this.#client = undefined;
      void client.close().catch(() => undefined);
    });
    try {
      await client.connect(
        new StreamableHTTPClientTransport(new URL(this.hub.url), {
          requestInit: { headers: { Authorization: `Bearer ${this.token}` } },
        }),
        { timeout: CALL_TIMEOUT_MS },
      );
    } catch (error) {
      stopWatching();
      throw new Error(`could not open a session: ${(error as Error).message}`);
    }
    // Killed while connecting: this session is already dead.
    if (generation !== this.hub.generation) {
      void client.close().catch(() => undefined);
      return;
    }
    this.#client = client;
    this.#generation = generation;
  }

  async call(
    name: 'notes_pull' | 'notes_commit',
    args: Record<string, string>,
  ): Promise<ToolAnswer> {
    const client = this.#client;
    const generation = this.#generation;
    if (!this.running || client === undefined) return 'killed';
    this.hub.inFlight += 1;
    try {
      return await callTool(client, name, args);
    } catch (error) {
      if (generation !== this.hub.generation || !this.hub.alive) return 'killed';
      throw error;
    } finally {
      this.hub.inFlight -= 1;
    }
  }

  kill(): { killed: boolean; midCall: boolean } {
    return this.hub.kill();
  }

  lastLog(): string {
    return this.hub.lastLog();
  }

  async close(): Promise<void> {
    const client = this.#client;
    this.#client = undefined;
    await client?.close().catch(() => undefined);
  }
}
