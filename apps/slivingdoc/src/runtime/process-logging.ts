import type { Scrubber } from '@slivingdoc/envelope';
import { createLogging, type Logging, routeProcessWarnings } from '../logging';
import { processScrubber } from './scrubber';

/**
 * The process's scrubber and loggers, built once the private root is known. A one-shot CLI
 * command logs nothing unless `LOG_LEVEL` is set: its report says everything a person at a
 * terminal needs (docs/cli.md, "Logging of the one-shot commands").
 */
export function processLogging(
  privateRoot: string | undefined,
  opts: { oneShot?: boolean } = {},
): {
  scrubber: Scrubber;
  logging: Logging;
} {
  const scrubber = processScrubber(privateRoot);
  const logging = createLogging({
    logLevel: process.env.LOG_LEVEL,
    scrubCredentials: scrubber.credentials,
    ...(opts.oneShot ? { unsetLevel: 'silent' as const } : {}),
  });
  routeProcessWarnings(logging.module('app'));
  return { scrubber, logging };
}
