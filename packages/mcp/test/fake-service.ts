import type { CommitRequest, NotebookService, PullRequest } from '@slivingdoc/engine';
import {
  buildSuccess,
  type CommitRefusal,
  type PathSets,
  type SuccessResult,
} from '@slivingdoc/envelope';

type Handler<R> = (request: R) => Promise<SuccessResult>;

/**
 * A NotebookService double: records every request and answers with what the test scripted
 * (by default a success for the requested path), so the adapter is tested alone.
 */
export class FakeNotebookService implements NotebookService {
  readonly pulls: PullRequest[] = [];
  readonly commits: CommitRequest[] = [];
  onPull: Handler<PullRequest>;
  onCommit: Handler<CommitRequest>;

  constructor(
    readonly notebookDir = '/w/nb',
    readonly sets: PathSets = { readOnly: [], writable: [] },
    readonly commitsRefused: CommitRefusal | undefined = undefined,
  ) {
    const ok = async (request: { path?: string }) =>
      buildSuccess({
        path: request.path || this.notebookDir,
        generation: 7,
        files: [{ path: 'notes/a.md', insertions: 2, deletions: 1 }],
        sets: this.sets,
      });
    this.onPull = ok;
    this.onCommit = ok;
  }

  pull(request: PullRequest): Promise<SuccessResult> {
    this.pulls.push(request);
    return this.onPull(request);
  }

  commit(request: CommitRequest): Promise<SuccessResult> {
    this.commits.push(request);
    return this.onCommit(request);
  }

  // The adapter never calls the CLI's and the view's operations: they fail loudly.
  status(): Promise<never> {
    return Promise.reject(new Error('status is not on the MCP surface'));
  }

  log(): Promise<never> {
    return Promise.reject(new Error('log is not on the MCP surface'));
  }

  revert(): Promise<never> {
    return Promise.reject(new Error('revert is not on the MCP surface'));
  }

  approve(): Promise<never> {
    return Promise.reject(new Error('approve is not on the MCP surface'));
  }

  /** Review never applies here unless a test says so. */
  reviewQueues = false;

  async reviewApplies(): Promise<boolean> {
    return this.reviewQueues;
  }

  acceptedGeneration(): Promise<never> {
    return Promise.reject(new Error('acceptedGeneration is not on the MCP surface'));
  }

  history(): Promise<never> {
    return Promise.reject(new Error('history is not on the MCP surface'));
  }

  publication(): Promise<never> {
    return Promise.reject(new Error('publication is not on the MCP surface'));
  }

  files(): Promise<never> {
    return Promise.reject(new Error('files is not on the MCP surface'));
  }

  readFile(): Promise<never> {
    return Promise.reject(new Error('readFile is not on the MCP surface'));
  }

  blame(): Promise<never> {
    return Promise.reject(new Error('blame is not on the MCP surface'));
  }

  async localChanges(): Promise<{ managed: string[]; unpublished: string[] }> {
    return { managed: [], unpublished: [] };
  }

  async close(): Promise<void> {}

  // Sessions belong to the app's HTTP hub, never to the adapter.
  session(): Promise<never> {
    return Promise.reject(new Error("sessions are not the adapter's"));
  }

  forget(): Promise<never> {
    return Promise.reject(new Error("forget is not the adapter's"));
  }
}

/** Every record the adapter logged, with its level and msg. */
export function recordingLogger() {
  const records: { level: string; msg: string; [key: string]: unknown }[] = [];
  const at =
    (level: string) =>
    (record: Record<string, unknown>, msg: string): void => {
      records.push({ level, msg, ...record });
    };
  return { records, logger: { info: at('info'), warn: at('warn'), error: at('error') } };
}
