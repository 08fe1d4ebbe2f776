import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { normaliseMessageId } from '../../../src/protocols/smpp/message-id.ts';

describe('normaliseMessageId', () => {
  it('reduces an id written in hex on one side and in decimal on the other to one form', () => {
    assert.equal(normaliseMessageId('000000FF', 'HEX'), normaliseMessageId('255', 'DECIMAL'));
    assert.equal(normaliseMessageId('0x1f', 'HEX'), '31');
    assert.equal(normaliseMessageId(' 0042 ', 'DECIMAL'), '42');
  });

  it('ignores case and leading zeros when ids are compared as they are', () => {
    assert.equal(normaliseMessageId('00AbC123', 'ASIS'), normaliseMessageId('abc123', 'ASIS'));
    assert.equal(normaliseMessageId('000', 'ASIS'), '0');
  });

  it('falls back to the plain form for ids that do not read in the format given', () => {
    assert.equal(normaliseMessageId('ZZ-1', 'HEX'), 'zz-1');
    assert.equal(normaliseMessageId('12ab', 'DECIMAL'), '12ab');
    assert.equal(normaliseMessageId('01a20dde-deb7-7154-af39-930b1f9a5043', 'ASIS'), '1a20dde-deb7-7154-af39-930b1f9a5043');
  });

  it('matches any number however each side writes it (padding, case, base), beyond 64 bits', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: (1n << 100n) - 1n }), fc.nat(6), fc.nat(6), fc.boolean(), (n, padHex, padDec, upper) => {
        let hex = '0'.repeat(padHex) + n.toString(16);
        if (upper) hex = hex.toUpperCase();
        const dec = '0'.repeat(padDec) + n.toString(10);
        assert.equal(normaliseMessageId(hex, 'HEX'), normaliseMessageId(dec, 'DECIMAL'));
        assert.equal(normaliseMessageId(hex, 'ASIS'), normaliseMessageId(n.toString(16), 'ASIS'));
      }),
      { seed: 7, numRuns: 1_000 },
    );
  });
});
