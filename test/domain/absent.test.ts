import assert from 'node:assert/strict';
import { test } from 'node:test';
import { omitNulls, present } from '../../src/domain/absent.ts';

test('omitNulls drops null and undefined properties at every level, and null items of arrays', () => {
  const value = {
    a: 1,
    b: null,
    c: undefined,
    d: { e: null, f: '', g: 0, h: false, i: { j: null } },
    k: [1, null, { l: null, m: 'x' }, [null]],
  };
  assert.deepStrictEqual(omitNulls(value), { a: 1, d: { f: '', g: 0, h: false, i: {} }, k: [1, { m: 'x' }, []] });
  assert.deepStrictEqual(value.d, { e: null, f: '', g: 0, h: false, i: { j: null } }, 'the input is left as it was');
});

test('omitNulls keeps a parsed "__proto__" key as an own property, and the copy a plain object', () => {
  const copy = omitNulls(JSON.parse('{"__proto__":{"text":"injected","x":null},"a":null}') as Record<string, unknown>);
  assert.equal(Object.getPrototypeOf(copy), Object.prototype);
  assert.equal((copy as Record<string, unknown>).text, undefined);
  assert.deepEqual(Object.keys(copy), ['__proto__']);
  assert.equal(JSON.stringify(copy), '{"__proto__":{"text":"injected"}}');
});

test('omitNulls keeps values that are not plain objects as they are', () => {
  const date = new Date(0);
  assert.equal(omitNulls(date), date);
  assert.equal(omitNulls(null), null);
  assert.equal(omitNulls('text'), 'text');
  assert.deepStrictEqual(omitNulls({ at: date }), { at: date });
});

test('present spreads a field only when it has a value', () => {
  assert.deepStrictEqual({ ...present('refClient', null), ...present('from', undefined) }, {});
  assert.deepStrictEqual(
    { ...present('refClient', 'r'), ...present('count', 0), ...present('on', false), ...present('text', '') },
    {
      refClient: 'r',
      count: 0,
      on: false,
      text: '',
    },
  );
});
