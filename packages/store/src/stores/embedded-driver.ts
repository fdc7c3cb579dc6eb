import { join } from 'node:path';
import type { StoreConfigBase, StoreDriver, StoreSetting } from '../driver';

/** The configuration of the embedded store, as the app parsed it. */
export interface EmbeddedStoreConfig extends StoreConfigBase {
  kind: 'embedded';
  /** Absolute directory holding the store. */
  dir: string;
  prefix: string;
}

/** The embedded driver's settings. */
export interface EmbeddedStoreSettings {
  readonly [name: string]: StoreSetting;
  readonly dir: StoreSetting<string>;
}

/** The embedded driver: the default, used when no other driver is selected. */
export const embeddedStoreDriver: StoreDriver<EmbeddedStoreConfig, EmbeddedStoreSettings> = {
  kind: 'embedded',
  title: 'embedded store',
  settings: {
    dir: {
      flag: 'store-dir',
      env: ['SLIVINGDOC_STORE_DIR'],
      placeholder: '<dir>',
      help: 'embedded store directory',
      parse: (raw, context) => context.resolvePath(raw),
    },
  },
  secretEnvVars: [],
  configure(values, { prefix, dataHome }): EmbeddedStoreConfig {
    // contract §7: `$XDG_DATA_HOME/slivingdoc/store` or `~/.local/share/slivingdoc/store`.
    return { kind: 'embedded', dir: values.dir ?? join(dataHome, 'slivingdoc/store'), prefix };
  },
  async open(config) {
    const { createEmbeddedStore } = await import('./embedded');
    return createEmbeddedStore({ dir: config.dir, prefix: config.prefix });
  },
  describe(config, redact) {
    return { location: redact(config.dir), endpoint: null };
  },
  localDirectory(config) {
    return config.dir;
  },
};
