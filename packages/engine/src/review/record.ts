/**
 * A proposal as stored under `proposals/<id>` (docs/review.md): an agent's queued change with
 * everything a reviewer on any host needs (its base, the base bytes and the proposed bytes of
 * every changed file, message, actor, time) and its decision once a person made one.
 */
import { DomainError } from '@slivingdoc/envelope';
import { isProposalId } from '@slivingdoc/store';
import { isValidActor } from '../actor';

/** Open until a person decides. */
export type ProposalState = 'open' | 'approved' | 'rejected';

/** One changed file: its bytes at the base and as proposed (null: absent there). */
export interface ProposalFile {
  path: string;
  base: Uint8Array | null;
  content: Uint8Array | null;
}

/** A person's decision, with the approver or rejecter's name. */
export interface ProposalDecision {
  by: string;
  at: string;
  revision: number;
  /** Reject's reason, when one was given. */
  reason?: string;
  /** Approve: the generation that published it. */
  generation?: string;
}

/** An approval under way (idempotent resumption after a kill: docs/review.md). */
export interface ProposalApproving {
  by: string;
  at: string;
  revision: number;
  /** The accepted head when the approval started; its publication comes after it. */
  fromHead: string | null;
}

/** The record. */
export interface ProposalRecord {
  version: 1;
  id: string;
  /** The proposing directory's participant identity (its private-state key). */
  directory: string;
  actor: string;
  revision: number;
  state: ProposalState;
  /** The generation of the directory's baseline the change was made against. */
  baseGeneration: string;
  message: string;
  files: ProposalFile[];
  createdAt: string;
  updatedAt: string;
  approving?: ProposalApproving;
  decision?: ProposalDecision;
}

/** REVIEW · PROPOSAL_MALFORMED: a stored record fails decoding; nothing is changed. */
export function proposalMalformed(id: string, why: string): DomainError {
  return new DomainError({
    code: 'REVIEW',
    reason: 'PROPOSAL_MALFORMED',
    message: `The stored proposal ${id} cannot be read (${why}); nothing was changed.`,
  });
}

type Json = Record<string, unknown>;

const b64 = (bytes: Uint8Array | null) =>
  bytes === null ? null : Buffer.from(bytes).toString('base64');

/** The stored bytes of a record. */
export function encodeProposal(record: ProposalRecord): Uint8Array {
  const value: Json = {
    ...record,
    files: record.files.map((file) => ({
      path: file.path,
      base: b64(file.base),
      content: b64(file.content),
    })),
  };
  return new TextEncoder().encode(`${JSON.stringify(value)}\n`);
}

function isRecordValue(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function str(value: unknown, what: string, id: string): string {
  if (typeof value !== 'string') throw proposalMalformed(id, `${what} is not a string`);
  return value;
}

function count(value: unknown, what: string, id: string): number {
  if (!Number.isSafeInteger(value) || (value as number) < 1) {
    throw proposalMalformed(id, `${what} is not a positive integer`);
  }
  return value as number;
}

function bytesOf(value: unknown, what: string, id: string): Uint8Array | null {
  if (value === null) return null;
  const text = str(value, what, id);
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text)) throw proposalMalformed(id, `${what} is not base64`);
  return new Uint8Array(Buffer.from(text, 'base64'));
}

function decision(value: unknown, id: string): ProposalDecision {
  if (!isRecordValue(value)) throw proposalMalformed(id, 'the decision is not an object');
  return {
    by: str(value.by, 'decision.by', id),
    at: str(value.at, 'decision.at', id),
    revision: count(value.revision, 'decision.revision', id),
    ...(value.reason === undefined ? {} : { reason: str(value.reason, 'decision.reason', id) }),
    ...(value.generation === undefined
      ? {}
      : { generation: str(value.generation, 'decision.generation', id) }),
  };
}

function approving(value: unknown, id: string): ProposalApproving {
  if (!isRecordValue(value)) throw proposalMalformed(id, 'approving is not an object');
  const fromHead = value.fromHead === null ? null : str(value.fromHead, 'approving.fromHead', id);
  return {
    by: str(value.by, 'approving.by', id),
    at: str(value.at, 'approving.at', id),
    revision: count(value.revision, 'approving.revision', id),
    fromHead,
  };
}

/** Decodes and validates a stored record; throws REVIEW · PROPOSAL_MALFORMED. */
export function decodeProposal(id: string, bytes: Uint8Array): ProposalRecord {
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch {
    throw proposalMalformed(id, 'not JSON text');
  }
  if (!isRecordValue(value) || value.version !== 1) throw proposalMalformed(id, 'not version 1');
  if (value.id !== id || !isProposalId(id)) throw proposalMalformed(id, 'its id does not match');
  const state = value.state;
  if (state !== 'open' && state !== 'approved' && state !== 'rejected') {
    throw proposalMalformed(id, 'unknown state');
  }
  const actor = str(value.actor, 'actor', id);
  if (!isValidActor(actor)) throw proposalMalformed(id, 'the actor is not a valid name');
  if (!Array.isArray(value.files)) throw proposalMalformed(id, 'files is not a list');
  const files = value.files.map((file: unknown) => {
    if (!isRecordValue(file)) throw proposalMalformed(id, 'a file is not an object');
    return {
      path: str(file.path, 'a file path', id),
      base: bytesOf(file.base, 'a base', id),
      content: bytesOf(file.content, 'a content', id),
    };
  });
  if (state !== 'open' && value.decision === undefined) {
    throw proposalMalformed(id, 'decided without a decision');
  }
  const baseGeneration = str(value.baseGeneration, 'baseGeneration', id);
  if (!/^(0|[1-9][0-9]{0,19})$/.test(baseGeneration)) {
    throw proposalMalformed(id, 'baseGeneration is not a generation');
  }
  return {
    version: 1,
    id,
    directory: str(value.directory, 'directory', id),
    actor,
    revision: count(value.revision, 'revision', id),
    state,
    baseGeneration,
    message: str(value.message, 'message', id),
    files,
    createdAt: str(value.createdAt, 'createdAt', id),
    updatedAt: str(value.updatedAt, 'updatedAt', id),
    ...(value.approving === undefined ? {} : { approving: approving(value.approving, id) }),
    ...(value.decision === undefined ? {} : { decision: decision(value.decision, id) }),
  };
}
