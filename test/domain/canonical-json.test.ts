import assert from 'node:assert/strict';
import { test } from 'node:test';
import { canonicalJson } from '../../src/domain/canonical-json.ts';

test('key order does not matter at any depth; array order does', () => {
  assert.equal(canonicalJson({ b: 1, a: { d: [2, { y: 1, x: 2 }], c: null } }), '{"a":{"c":null,"d":[2,{"x":2,"y":1}]},"b":1}');
  assert.equal(canonicalJson({ a: 1, b: 2 }), canonicalJson({ b: 2, a: 1 }));
  assert.notEqual(canonicalJson([1, 2]), canonicalJson([2, 1]));
});

test('undefined properties are dropped; other values as JSON writes them', () => {
  assert.equal(canonicalJson({ a: undefined, b: 'x' }), '{"b":"x"}');
  assert.equal(canonicalJson('text'), '"text"');
  assert.equal(canonicalJson(1.5), '1.5');
  assert.equal(canonicalJson(null), 'null');
  assert.notEqual(canonicalJson({ a: 1 }), canonicalJson({ a: '1' }));
});
