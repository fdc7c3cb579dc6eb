/** Formats a number for a table cell: integers plainly, small values with two decimals. */
export function formatNumber(value: number | undefined, digits = 1): string {
  if (value === undefined || Number.isNaN(value)) return '–';
  if (Number.isInteger(value)) return String(value);
  return value.toFixed(Math.abs(value) < 10 ? Math.max(digits, 2) : digits);
}

/** Renders rows as a left-aligned text table with a header rule. */
export function renderColumns(header: string[], rows: string[][]): string {
  const widths = header.map((cell, i) =>
    Math.max(cell.length, ...rows.map((r) => (r[i] ?? '').length)),
  );
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => cell.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}
