import type { NotebookService } from '@slivingdoc/engine';

/** A service wrapper that knows which calls are still running, so shutdown can wait for them. */
export interface TrackedService {
  service: NotebookService;
  /** Resolves true once every running call has settled, or false when `deadline` passes first. */
  drain(deadline: Promise<void>): Promise<boolean>;
}

/** Wraps every operation to track in-flight calls; everything else passes through. */
export function trackInFlight(inner: NotebookService): TrackedService {
  const running = new Set<Promise<unknown>>();
  const track = <T>(call: Promise<T>): Promise<T> => {
    running.add(call);
    const forget = () => running.delete(call);
    call.then(forget, forget);
    return call;
  };
  const service: NotebookService = {
    get sets() {
      return inner.sets;
    },
    get notebookDir() {
      return inner.notebookDir;
    },
    get commitsRefused() {
      return inner.commitsRefused;
    },
    pull: (request) => track(inner.pull(request)),
    commit: (request) => track(inner.commit(request)),
    status: (request) => track(inner.status(request)),
    log: (request) => track(inner.log(request)),
    revert: (request) => track(inner.revert(request)),
    approve: (request) => track(inner.approve(request)),
    reviewApplies: (request) => track(inner.reviewApplies(request)),
    acceptedGeneration: (signal) => track(inner.acceptedGeneration(signal)),
    history: (request) => track(inner.history(request)),
    publication: (request) => track(inner.publication(request)),
    files: (request) => track(inner.files(request)),
    readFile: (request) => track(inner.readFile(request)),
    blame: (request) => track(inner.blame(request)),
    localChanges: (under) => inner.localChanges(under),
    session: (options) => inner.session(options),
    forget: (dir) => inner.forget(dir),
    close: () => inner.close(),
  };
  return {
    service,
    async drain(deadline) {
      const settled = Promise.allSettled([...running]).then(() => true);
      return Promise.race([settled, deadline.then(() => false)]);
    },
  };
}
