import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { isShortCode, newShortCode, SHORT_CODE_LENGTH, shortenUrls } from '../../src/domain/short-links.ts';

const BASE = 'https://t.example/l/';

test('codes are 10 base62 characters, all of them drawn', () => {
  const seen = new Set<string>();
  const chars = new Set<string>();
  for (let i = 0; i < 2000; i++) {
    const code = newShortCode();
    assert.ok(isShortCode(code), code);
    assert.equal(code.length, SHORT_CODE_LENGTH);
    seen.add(code);
    for (const c of code) chars.add(c);
  }
  assert.equal(seen.size, 2000, 'no repeat');
  assert.equal(chars.size, 62, 'every character of the alphabet comes up');
  for (const bad of ['', 'abc', 'AAAAAAAAA/', 'AAAAAAAAAAA', 'AAAAA AAAA', 'ééééééééééé']) assert.equal(isShortCode(bad), false, bad);
});

test('long URLs are replaced in place, punctuation kept outside, a repeated URL gets one link', () => {
  let n = 0;
  const code = () => `C${String(n++).padStart(9, '0')}`;
  const url = 'https://shop.example.com/a/very/long/path?with=query&and=more#frag';
  const r = shortenUrls(`Go (${url}), or ${url}! Short: https://x.io/a http://t.co.`, BASE, code);
  assert.equal(r.text, `Go (${BASE}C000000000), or ${BASE}C000000000! Short: https://x.io/a http://t.co.`);
  assert.deepEqual(r.links, [{ code: 'C000000000', url }]);
  const twice = shortenUrls(r.text, BASE, code);
  assert.deepEqual(twice, { text: r.text, links: [] }, 'links already on the base stay');
  assert.deepEqual(shortenUrls('no links, ftp://files.example.com/a/very/long/path/indeed/yes', BASE, code).links, []);
});

test('any text: putting the URLs back gives the text again, and no long URL is left', () => {
  const segment = fc.oneof(
    fc.string({ maxLength: 30 }).map((s) => s.replace(/https?:\/\//gi, '')),
    fc.webUrl({ validSchemes: ['http', 'https'], withQueryParameters: true, withFragments: true }),
    fc.constantFrom(' ', '\n', '. ', ', ', '!'),
  );
  fc.assert(
    fc.property(fc.array(segment, { maxLength: 12 }), (parts) => {
      const text = parts.join('');
      const { text: out, links } = shortenUrls(text, BASE);
      let back = out;
      for (const l of links) {
        assert.ok(isShortCode(l.code));
        assert.ok(l.url.length > BASE.length + SHORT_CODE_LENGTH);
        back = back.split(`${BASE}${l.code}`).join(l.url);
      }
      assert.equal(back, text);
      assert.equal(new Set(links.map((l) => l.code)).size, links.length);
      for (const m of out.matchAll(/https?:\/\/[^\s<>"]+/gi)) {
        assert.ok(m[0].startsWith(BASE) || m[0].length <= BASE.length + SHORT_CODE_LENGTH + 8, `left: ${m[0]}`);
      }
    }),
    { seed: 20261207, numRuns: 1000 },
  );
});
