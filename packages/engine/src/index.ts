export type { CommitRequest, NotebookService, PullRequest } from './service';
