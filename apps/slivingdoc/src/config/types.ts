import type { StoreConfig } from './store-registry';

export type { StoreConfig } from './store-registry';

/** `slivingdoc token add|list|remove`: its own small option set (`--read-only` is a switch here). */
export type TokenCommandLine =
  | {
      kind: 'token';
      action: 'add';
      name: string;
      readOnly: boolean;
      writable: string[] | undefined;
      readOnlyPaths: string[] | undefined;
      /** `--review queue`: the token's tool commits are always queued (docs/review.md). */
      review: 'queue' | undefined;
      /** `--reviewer`: a person's token for the view's Approve and Reject, refused at /mcp. */
      reviewer: boolean;
    }
  | { kind: 'token'; action: 'list' }
  | { kind: 'token'; action: 'remove'; name: string };

/** The validated configuration of one process (contract §12); every path is absolute. */
export interface AppConfig {
  store: StoreConfig;
  /**
   * The workspace root; undefined only for `serve` without one, which then creates a
   * session directory at startup (contract §2).
   */
  workspaceRoot: string | undefined;
  /** The private root; undefined only when the session's `private/` is to be used. */
  privateRoot: string | undefined;
  /** The path sets, validated and normalised by `@slivingdoc/policy` (contract §5). */
  writable: string[];
  readOnly: string[];
  commitRetries: number;
  checkpointPacks: number;
  retainedCheckpoints: number;
  /** contract §6: concurrent insertions at one place are kept (`keep`) or conflict (`conflict`). */
  mergeAdditions: 'keep' | 'conflict';
  /**
   * The author name of the commits this process publishes (`--actor`, `SLIVINGDOC_ACTOR`, for
   * the CLI else the OS user name). Undefined only for `serve` without one: each MCP client's
   * `clientInfo.name` is used.
   */
  actor: string | undefined;
  /** `serve --listen`: MCP over Streamable HTTP instead of stdio (docs/hosts.md, "Over HTTP"). */
  listen?: ListenConfig | undefined;
}

/** The HTTP side of `serve --listen` (docs/configuration.md). */
export interface ListenConfig {
  /** The address to bind (a name or an IP; IPv6 without brackets). */
  host: string;
  port: number;
  /** `--listen-public`: a non-loopback address is allowed (and warned about). */
  public: boolean;
  /** Browser origins let in (`--allow-origin`); none by default. */
  allowedOrigins: string[];
  /**
   * Live sessions at most; at the limit the least recently used idle session ends to make
   * room, and initialize is 503 with Retry-After only when every session has a request in flight.
   */
  maxSessions: number;
  /** A session with no request for this long ends (its directory, the token's, stays). */
  idleTimeoutMs: number;
  /** Requests of one token (all its sessions and sessionless ones) at once; beyond, 429. */
  maxCallsPerToken: number;
  /** `SLIVINGDOC_TOKEN_FILE`; undefined: the user's config directory (`runtime/token-file.ts`). */
  tokenFile: string | undefined;
}

/** What the command line asks for, once it has been validated. */
export type Invocation =
  | { kind: 'help'; command?: string }
  | { kind: 'version' }
  | { kind: 'serve'; config: AppConfig }
  | {
      kind: 'view';
      config: AppConfig;
      /** Where the view listens (`--listen HOST:PORT`). */
      listen: { host: string; port: number };
      /**
       * The token file whose tokens log in too (as for `serve --listen`); undefined: the
       * default one (`runtime/token-file.ts`).
       */
      tokenFile: string | undefined;
    }
  | { kind: 'pull'; path: string; config: AppConfig; quiet: boolean }
  | { kind: 'commit'; path: string; message: string; config: AppConfig; quiet: boolean }
  | { kind: 'status'; path: string; config: AppConfig; json: boolean }
  | {
      kind: 'log';
      path: string;
      config: AppConfig;
      json: boolean;
      /** How many publications (`-n`), default 20. */
      limit: number;
      stat: boolean;
      /** Whole messages instead of their first line. */
      full: boolean;
    }
  | { kind: 'token'; command: TokenCommandLine; tokenFile: string | undefined }
  | {
      kind: 'blame';
      path: string;
      config: AppConfig;
      /** The notebook path of the file (`/`-separated, relative to the notebook). */
      file: string;
      json: boolean;
    }
  | {
      kind: 'revert';
      path: string;
      config: AppConfig;
      generation: number;
      message: string | undefined;
      quiet: boolean;
    }
  | {
      kind: 'review';
      config: AppConfig;
      action: 'set' | 'show';
      /** `set`: the mode. */
      mode: 'queue' | 'direct' | undefined;
      /** `set --actor NAME`: the rule's actor (never the environment's actor). */
      ruleActor: string | undefined;
      /** `set --paths`: the rule's path entries. */
      paths: string[];
      json: boolean;
    }
  | {
      kind: 'proposals';
      config: AppConfig;
      action: 'list' | 'show' | 'reject';
      /** `show` and `reject`: the proposal's id. */
      id: string | undefined;
      reason: string | undefined;
      json: boolean;
    }
  | {
      kind: 'approve';
      /** The reviewer's clean, pulled notebook directory the approval publishes through. */
      path: string;
      config: AppConfig;
      id: string;
      revision: number | undefined;
      json: boolean;
      quiet: boolean;
    };

/** The invocations that address one notebook directory. */
export type PathInvocation = Extract<Invocation, { path: string }>;

/**
 * A startup refusal: rendered as the one stderr line `slivingdoc: <what> — <reason>`.
 * Reasons are built so they never carry a secret (endpoint values are never echoed).
 */
export interface Refusal {
  kind: 'refusal';
  /**
   * `startup`: the process could not set itself up (e.g. the session directory);
   * `store unreachable`: the compatibility probe got no trustworthy answer within its budget.
   */
  what: 'usage' | 'configuration' | 'startup' | 'store unreachable' | 'INCOMPATIBLE_STORE';
  reason: string;
  /**
   * 3 for INCOMPATIBLE_STORE; 1 for an unreachable store (the retryable condition a call
   * reports as STORAGE_FAILURE · STORE_UNREACHABLE); else 2. Nothing was started.
   */
  exitCode: 1 | 2 | 3;
}

/** The process facts parsing depends on, passed in so parsing stays a pure function. */
export interface ParseContext {
  cwd: string;
  home: string;
  /** The OS user name, the CLI's default actor (undefined: none could be found). */
  userName?: string | undefined;
}
