import { createScrubber, type Scrubber } from '@slivingdoc/envelope';
import { createLogging, type Logging, routeProcessWarnings } from '../logging';

/** The process's scrubber and loggers, built once the private root is known. */
export function processLogging(privateRoot: string | undefined): {
  scrubber: Scrubber;
  logging: Logging;
} {
  const scrubber = createScrubber({ ...(privateRoot ? { privateRoot } : {}), env: process.env });
  const logging = createLogging({
    logLevel: process.env.LOG_LEVEL,
    scrubCredentials: scrubber.credentials,
  });
  routeProcessWarnings(logging.module('app'));
  return { scrubber, logging };
}
