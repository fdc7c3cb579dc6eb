/** `--quiet` (contract §12): only the first and the last line of a report (once when it has one). */
export function quietReport(report: string): string {
  const lines = report.replace(/\n$/, '').split('\n');
  const first = lines[0] ?? '';
  const last = lines.at(-1) ?? '';
  return lines.length <= 1 ? `${first}\n` : `${first}\n${last}\n`;
}
