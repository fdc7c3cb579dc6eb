import { DomainError } from '@slivingdoc/envelope';
import { decodeArguments, TOOL_NAMES } from '@slivingdoc/mcp';
import fc from 'fast-check';
import { isCataloguedReason } from '../catalogue';
import { edgyString } from './text';

const DECODER_REASONS = new Set(['INVALID_ARGUMENTS', 'PATH_INVALID', 'MESSAGE_INVALID']);
const ALLOWED: Record<string, string[]> = {
  notes_pull: ['path'],
  notes_commit: ['message', 'path'],
};

const key = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom('path', 'message') },
  {
    weight: 1,
    arbitrary: fc.constantFrom('__proto__', 'constructor', 'toString', 'Path', 'message ', ''),
  },
  { weight: 1, arbitrary: edgyString },
  { weight: 1, arbitrary: fc.string({ minLength: 200, maxLength: 5000 }) },
);
const value = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.oneof(
      edgyString,
      edgyString.map((s) => `/${s}`),
      fc.constantFrom('~/notes', '/tmp/a', 'fix: typo'),
    ),
  },
  { weight: 2, arbitrary: fc.anything() },
);
const rawArguments = fc.option(fc.dictionary(key, value, { maxKeys: 4 }), { nil: undefined });

/**
 * Tool-argument decoder (contract §2): total on any raw `arguments`; a refusal is always the
 * catalogued INVALID_REQUEST with one of the decoder's reasons and a bounded message; an
 * accepted call has only allowed string fields, its required field, and them unchanged.
 */
export const toolArgumentDecoder = fc.property(
  fc.constantFrom(...TOOL_NAMES),
  rawArguments,
  fc.boolean(),
  (tool, raw, duplicateKeys) => {
    let decoded: ReturnType<typeof decodeArguments>;
    try {
      decoded = decodeArguments(tool, raw, { home: '/home/fuzz', duplicateKeys });
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      if (
        err.code !== 'INVALID_REQUEST' ||
        !DECODER_REASONS.has(err.reason) ||
        !isCataloguedReason(err.code, err.reason)
      )
        throw err;
      if (err.message.length > 1000)
        throw new Error(`unbounded message (${err.message.length} chars)`);
      return;
    }
    if (duplicateKeys) throw new Error('accepted arguments with a duplicate key');
    const given = raw ?? {};
    for (const [name, v] of Object.entries(given)) {
      if (!ALLOWED[tool]?.includes(name) || typeof v !== 'string')
        throw new Error(`accepted field ${JSON.stringify(name)}`);
    }
    if (tool === 'notes_commit' && typeof given.message !== 'string')
      throw new Error('accepted a commit without message');
    if (decoded.path !== given.path || decoded.message !== given.message)
      throw new Error('decoded fields differ from the raw ones');
  },
);
