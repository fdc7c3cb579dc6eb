import { describe, expect, it } from 'vitest';
import { visibleSegments, visibleText } from '../src/visible';

describe('invisible code points made visible', () => {
  it('marks zero-width, bidi and other invisible code points; keeps tab, line feed and space', () => {
    const text = 'a\u200bb\u202ec\u2066d\u00a0e\tf g\nh\ufeff';
    expect(visibleText(text)).toBe('a⟨U+200B⟩b⟨U+202E⟩c⟨U+2066⟩d⟨U+00A0⟩e\tf g\nh⟨U+FEFF⟩');
  });

  it('cuts text into the same runs and markers, in order (the view renders them)', () => {
    const text = '\u200bone two\u202e\u202e3';
    const segments = visibleSegments(text);
    expect(segments).toEqual([
      { marker: '⟨U+200B⟩' },
      { text: 'one two' },
      { marker: '⟨U+202E⟩' },
      { marker: '⟨U+202E⟩' },
      { text: '3' },
    ]);
    const joined = segments.map((s) => ('marker' in s ? s.marker : s.text)).join('');
    expect(joined).toBe(visibleText(text));
    expect(visibleSegments('plain\ttext\n')).toEqual([{ text: 'plain\ttext\n' }]);
  });
});
