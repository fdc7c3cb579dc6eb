import { describe, expect, it } from 'vitest';
import { createLogging, parseLogLevel, routeProcessWarnings } from '../src/logging';

function capture(logLevel: string | undefined, scrub = (s: string) => s) {
  const lines: Record<string, unknown>[] = [];
  const logging = createLogging({
    logLevel,
    scrubCredentials: scrub,
    destination: { write: (line: string) => lines.push(JSON.parse(line)) },
  });
  return { logging, lines };
}

describe('LOG_LEVEL parsing', () => {
  it('unset or empty means info everywhere', () => {
    for (const raw of [undefined, '', '  ']) {
      expect(parseLogLevel(raw)).toEqual({
        levels: { defaultLevel: 'info', modules: {} },
        malformed: false,
      });
    }
  });

  it('takes module=level pairs and one bare default, in any order', () => {
    expect(parseLogLevel('cli=warn,mcp=debug,info').levels).toEqual({
      defaultLevel: 'info',
      modules: { cli: 'warn', mcp: 'debug' },
    });
    expect(parseLogLevel('error, store = trace').levels).toEqual({
      defaultLevel: 'error',
      modules: { store: 'trace' },
    });
    expect(parseLogLevel('DEBUG').levels.defaultLevel).toBe('debug');
    expect(parseLogLevel('engine=silent').levels.modules).toEqual({ engine: 'silent' });
  });

  it.each([
    'verbose',
    'cli=loud',
    'git=debug',
    'info,debug',
    'cli=warn,cli=info',
    'cli=warn,,info',
    'cli=warn=x',
    '=info',
    'cli=',
  ])('%j is malformed and falls back to info', (raw) => {
    expect(parseLogLevel(raw)).toEqual({
      levels: { defaultLevel: 'info', modules: {} },
      malformed: true,
    });
  });
});

describe('log records', () => {
  it('are JSON with level as its label and the module name', () => {
    const { logging, lines } = capture(undefined);
    logging.module('mcp').info({ tool: 'notes_pull' }, 'tool call started');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 'info',
      module: 'mcp',
      tool: 'notes_pull',
      msg: 'tool call started',
    });
    expect(typeof lines[0]?.time).toBe('number');
  });

  it('each module logs at its own level', () => {
    const { logging, lines } = capture('cli=warn,mcp=debug,info');
    logging.module('cli').info('hidden');
    logging.module('cli').warn('cli warn');
    logging.module('mcp').debug('mcp debug');
    logging.module('engine').debug('hidden');
    logging.module('engine').info('engine info');
    expect(lines.map((l) => [l.module, l.level, l.msg])).toEqual([
      ['cli', 'warn', 'cli warn'],
      ['mcp', 'debug', 'mcp debug'],
      ['engine', 'info', 'engine info'],
    ]);
  });

  it('a malformed LOG_LEVEL warns once from app and logs at info', () => {
    const { logging, lines } = capture('cli=chatty');
    logging.module('store').debug('hidden');
    logging.module('store').info('shown');
    expect(lines.map((l) => [l.module, l.level, l.msg])).toEqual([
      ['app', 'warn', 'malformed LOG_LEVEL; logging at info'],
      ['store', 'info', 'shown'],
    ]);
    expect(lines[0]?.logLevel).toBe('cli=chatty');
  });

  it('err carries the full cause chain with credentials scrubbed everywhere', () => {
    const scrub = (s: string) => s.replaceAll('SECRETVALUE', '[redacted]');
    const { logging, lines } = capture(undefined, scrub);
    const inner = Object.assign(new Error('denied for SECRETVALUE'), {
      Endpoint: 'http://SECRETVALUE@h',
      nested: { deep: ['SECRETVALUE'] },
    });
    const outer = new Error('store failed', { cause: inner });
    logging.module('store').error({ err: outer }, 'tool call completed');
    const text = JSON.stringify(lines[0]);
    expect(text).not.toContain('SECRETVALUE');
    expect(lines[0]?.err).toMatchObject({
      type: 'Error',
      message: 'store failed: denied for [redacted]',
      stack: expect.stringContaining('caused by: Error: denied for [redacted]'),
    });
  });
});

describe('process warnings', () => {
  it('become warn records instead of plain text on stderr', async () => {
    const saved = process.listeners('warning');
    const { logging, lines } = capture(undefined);
    try {
      routeProcessWarnings(logging.module('app'));
      process.emitWarning('something odd', 'ExampleWarning');
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.removeAllListeners('warning');
      for (const listener of saved) process.on('warning', listener);
    }
    expect(lines).toEqual([
      expect.objectContaining({
        level: 'warn',
        module: 'app',
        msg: 'process warning',
        warning: { name: 'ExampleWarning', message: 'something odd' },
      }),
    ]);
  });
});
