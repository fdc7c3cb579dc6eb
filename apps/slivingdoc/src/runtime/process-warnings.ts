/**
 * Process warnings (`process.emitWarning`, e.g. from a dependency) never reach stderr as Node's
 * plain multi-line text: an MCP host shows the server's stderr to its user, and every line
 * there is a pino JSON record. `serve` opens and probes the store before pino loads (start-up
 * stays fast), so warnings are held from the bin's first instruction until the process's
 * logger takes them. A process that exits before it has a logger drops them.
 *
 * Its own module, free of pino, so the bin can take warnings before loading anything else.
 */
type WarningSink = (warning: Error) => void;

const held: Error[] = [];
let sink: WarningSink | undefined;
let holding = false;

/** Replaces Node's default printer: warnings are held until {@link sendProcessWarnings}. */
export function holdProcessWarnings(): void {
  if (holding) return;
  holding = true;
  process.removeAllListeners('warning');
  process.on('warning', (warning) => {
    if (sink === undefined) held.push(warning);
    else sink(warning);
  });
}

/** From now on every warning, the held ones first, goes to `to`. */
export function sendProcessWarnings(to: WarningSink): void {
  holdProcessWarnings();
  sink = to;
  for (const warning of held.splice(0)) to(warning);
}
