import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The fenced policy blocks of docs/configuration.md ("Members of a shared bucket"), by name. */
export type PolicyName =
  | 'reader-bucket-policy'
  | 'writer-bucket-policy'
  | 'reader-iam-policy'
  | 'writer-iam-policy';

interface Policy {
  Version: string;
  Statement: Record<string, unknown>[];
}

const CONFIGURATION_DOC = join(import.meta.dirname, '../../../../docs/configuration.md');

/**
 * Every ```json <name> block of docs/configuration.md, verbatim: the tests apply exactly what
 * the documentation shows, so the two cannot drift.
 */
export function documentedPolicies(): Map<string, string> {
  const doc = readFileSync(CONFIGURATION_DOC, 'utf8');
  const blocks = new Map<string, string>();
  for (const match of doc.matchAll(/^```json ([a-z-]+)\n([\s\S]*?)^```$/gm))
    blocks.set(match[1]!, match[2]!);
  return blocks;
}

/** One documented policy with its placeholders filled in. */
export function documentedPolicy(
  name: PolicyName,
  at: { bucket: string; prefix: string; memberArn?: string },
): Policy {
  const text = documentedPolicies().get(name);
  if (text === undefined) throw new Error(`docs/configuration.md has no \`\`\`json ${name} block`);
  const filled = text
    .replaceAll('<bucket>', at.bucket)
    .replaceAll('<prefix>', at.prefix)
    .replaceAll('<member-arn>', at.memberArn ?? '<member-arn>');
  return JSON.parse(filled) as Policy;
}

/**
 * One bucket policy holding the statements of every member (a bucket has one policy), each
 * statement's Sid made unique by its member's place in the list.
 */
export function bucketPolicyOf(members: Policy[]): Policy {
  return {
    Version: '2012-10-17',
    Statement: members.flatMap((policy, n) =>
      policy.Statement.map((statement) => ({ ...statement, Sid: `${statement.Sid}${n}` })),
    ),
  };
}
