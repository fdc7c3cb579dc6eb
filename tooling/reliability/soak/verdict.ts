import type { SoakReport } from './checker';

/**
 * Everything that makes a soak run fail, as readable lines (empty = the promise held):
 * lost lines, anomalies, duplicate generations, surviving markers, missing commits, and a
 * published generation beyond the final manifest.
 */
export function soakProblems(
  r: SoakReport & { manifestGeneration: number },
  expectedCommits: number,
): string[] {
  const problems: string[] = [];
  if (r.lost > 0)
    problems.push(
      `lost ${r.lost} acknowledged lines, e.g. ${JSON.stringify(r.lostLines.slice(0, 3))}`,
    );
  if (r.anomalies.length > 0) problems.push(`anomalies: ${r.anomalies.slice(0, 5).join('; ')}`);
  // With group commit the members of one group share its generation, so a generation told
  // to several publishing commits proves nothing any more; one beyond the final manifest does.
  if (r.maxPublishedGeneration > r.manifestGeneration)
    problems.push(
      `generation ${r.maxPublishedGeneration} reported beyond the final manifest's ${r.manifestGeneration}`,
    );
  if (r.filesWithMarkers.length > 0)
    problems.push(`marker lines in the final notebook: ${r.filesWithMarkers.join(', ')}`);
  if (r.commits !== expectedCommits)
    problems.push(`${r.commits} commits acknowledged, ${expectedCommits} expected`);
  if (r.acknowledgedLines === 0) problems.push('nothing was acknowledged');
  return problems;
}
