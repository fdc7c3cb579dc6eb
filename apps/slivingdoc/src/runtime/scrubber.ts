import { createScrubber, type Scrubber } from '@slivingdoc/envelope';
import { STORE_SECRET_ENV_VARS } from '../config/store-registry';

/**
 * The process's diagnostic scrubber: `process.env` (read once), with the secret variables
 * every registered store driver declares, and the private root when it is known.
 */
export function processScrubber(privateRoot?: string): Scrubber {
  return createScrubber({
    ...(privateRoot ? { privateRoot } : {}),
    env: process.env,
    secretEnvVars: STORE_SECRET_ENV_VARS,
  });
}
