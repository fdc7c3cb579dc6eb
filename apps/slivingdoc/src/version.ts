import pkg from '../package.json' with { type: 'json' };

/** The release version: the implementation version the server advertises. */
export const VERSION: string = pkg.version;
