import { randomUUID } from 'node:crypto';

const TEMP_NAME =
  /^\.slivingdoc-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.tmp$/;

/** A fresh `.slivingdoc-<uuid>.tmp` name: the only way L is ever written (contract §4). */
export function newTempName(): string {
  return `.slivingdoc-${randomUUID()}.tmp`;
}

/** True for a name {@link newTempName} produces: scans ignore and remove such files. */
export function isTempName(name: string): boolean {
  return TEMP_NAME.test(name);
}
