import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConcatAssembler, concatKey, type ExpiredAssembly } from '../../../src/protocols/smpp/concat.ts';
import { eventually } from '../../support/wait.ts';

function assembler(options: { timeoutMs?: number; maxPending?: number } = {}) {
  let n = 0;
  const expired: ExpiredAssembly<string>[] = [];
  const a = new ConcatAssembler<string>({
    allocateMessageId: () => `m${++n}`,
    onExpire: (e) => expired.push(e),
    ...options,
  });
  return { a, expired };
}

const gsm = (s: string) => Buffer.from(s, 'latin1'); // ASCII letters are the same septets in GSM 7-bit
const ucs2 = (s: string) => Buffer.from(s, 'utf16le').swap16();

describe('ConcatAssembler', () => {
  it('assembles parts received out of order into one text under one id, meta from part 1', () => {
    const { a } = assembler();
    const k = concatKey('p', '33600000001', '33600000002', 7);
    assert.deepEqual(a.add(k, { ref: 7, total: 3, seq: 3 }, gsm('world'), 0, 'meta3'), {
      kind: 'partial',
      messageId: 'm1',
      received: 1,
      total: 3,
    });
    assert.deepEqual(a.add(k, { ref: 7, total: 3, seq: 1 }, gsm('Hello '), 0, 'meta1'), {
      kind: 'partial',
      messageId: 'm1',
      received: 2,
      total: 3,
    });
    assert.equal(a.size, 1);
    assert.deepEqual(a.add(k, { ref: 7, total: 3, seq: 2 }, gsm('big '), 0, 'meta2'), {
      kind: 'complete',
      messageId: 'm1',
      text: 'Hello big world',
      total: 3,
      meta: 'meta1',
    });
    assert.equal(a.size, 0);
  });

  it('decodes the joined octets, so a surrogate pair split across parts survives', () => {
    const { a } = assembler();
    const bytes = ucs2('ab😀cd');
    const k = concatKey('p', 's', 'd', 300);
    a.add(k, { ref: 300, total: 2, seq: 2 }, bytes.subarray(6), 8, '');
    const done = a.add(k, { ref: 300, total: 2, seq: 1 }, bytes.subarray(0, 6), 8, '');
    assert.equal(done.kind === 'complete' && done.text, 'ab😀cd');
  });

  it('decodes part by part when the parts disagree on data_coding', () => {
    const { a } = assembler();
    const k = concatKey('p', 's', 'd', 1);
    a.add(k, { ref: 1, total: 2, seq: 1 }, Buffer.from('Ça ', 'latin1'), 3, '');
    const done = a.add(k, { ref: 1, total: 2, seq: 2 }, ucs2('va ✓'), 8, '');
    assert.equal(done.kind === 'complete' && done.text, 'Ça va ✓');
  });

  it('keeps separate assemblies per key and reports duplicates and inconsistent totals', () => {
    const { a } = assembler();
    const k1 = concatKey('p1', 's', 'd', 1);
    const k2 = concatKey('p2', 's', 'd', 1);
    assert.equal(a.add(k1, { ref: 1, total: 2, seq: 1 }, gsm('a'), 0, '').kind, 'partial');
    assert.deepEqual(a.add(k2, { ref: 1, total: 2, seq: 1 }, gsm('b'), 0, ''), {
      kind: 'partial',
      messageId: 'm2',
      received: 1,
      total: 2,
    });
    assert.deepEqual(a.add(k1, { ref: 1, total: 2, seq: 1 }, gsm('a'), 0, ''), { kind: 'duplicate', messageId: 'm1' });
    assert.deepEqual(a.add(k1, { ref: 1, total: 3, seq: 2 }, gsm('x'), 0, ''), {
      kind: 'inconsistent',
      messageId: 'm1',
    });
    const done = a.add(k1, { ref: 1, total: 2, seq: 2 }, gsm('c'), 0, '');
    assert.equal(done.kind === 'complete' && done.text, 'ac');
  });

  it('refuses new assemblies past maxPending', () => {
    const { a } = assembler({ maxPending: 2 });
    a.add('k1', { ref: 1, total: 2, seq: 1 }, gsm('a'), 0, '');
    a.add('k2', { ref: 1, total: 2, seq: 1 }, gsm('a'), 0, '');
    assert.deepEqual(a.add('k3', { ref: 1, total: 2, seq: 1 }, gsm('a'), 0, ''), { kind: 'full' });
    // Parts of assemblies already pending still go in.
    assert.equal(a.add('k1', { ref: 1, total: 2, seq: 2 }, gsm('b'), 0, '').kind, 'complete');
    assert.equal(a.add('k3', { ref: 1, total: 2, seq: 1 }, gsm('a'), 0, '').kind, 'partial');
    a.clear();
  });

  it('expires an incomplete assembly after the timeout and reports it once', async () => {
    const { a, expired } = assembler({ timeoutMs: 50 });
    a.add('k', { ref: 9, total: 3, seq: 2 }, gsm('x'), 0, 'meta');
    a.add('k', { ref: 9, total: 3, seq: 1 }, gsm('y'), 0, 'meta1');
    await eventually(() => expired.length === 1, 5_000, 'expiry');
    assert.deepEqual(expired, [{ key: 'k', messageId: 'm1', received: 2, total: 3, meta: 'meta1' }]);
    assert.equal(a.size, 0);
    // A late part starts a new assembly with a new id.
    assert.equal(a.add('k', { ref: 9, total: 3, seq: 3 }, gsm('z'), 0, '').kind, 'partial');
    a.clear();
  });
});

describe('ConcatAssembler budgets', () => {
  it('refuses an owner past its parts or octets alone, bounds the octets of all, and gives budget back when messages complete', () => {
    let n = 0;
    const a = new ConcatAssembler<string>({
      allocateMessageId: () => `m${++n}`,
      onExpire: () => {},
      maxPartsPerOwner: 3,
      maxBytesPerOwner: 100,
      maxBytes: 150,
    });
    for (let i = 0; i < 3; i++) assert.equal(a.add(`f${i}`, { ref: i, total: 2, seq: 1 }, gsm('x'), 0, '', 'flooder').kind, 'partial');
    assert.deepEqual(a.add('f9', { ref: 9, total: 2, seq: 1 }, gsm('x'), 0, '', 'flooder'), { kind: 'over-budget' });
    assert.equal(a.add('c1', { ref: 1, total: 2, seq: 1 }, gsm('y'), 0, '', 'calm').kind, 'partial', 'another owner is not affected');
    assert.deepEqual(a.add('big', { ref: 2, total: 2, seq: 1 }, Buffer.alloc(101), 0, '', 'big'), { kind: 'over-budget' });
    assert.equal(a.add('b1', { ref: 3, total: 2, seq: 1 }, Buffer.alloc(90), 0, '', 'b').kind, 'partial');
    assert.deepEqual(a.add('b2', { ref: 4, total: 2, seq: 1 }, Buffer.alloc(90), 0, '', 'c'), { kind: 'full' }, 'all owners together stay under maxBytes');
    assert.equal(a.add('f0', { ref: 0, total: 2, seq: 2 }, gsm('z'), 0, '', 'flooder').kind, 'over-budget', 'a part counts even when it completes');
    assert.equal(a.add('c1', { ref: 1, total: 2, seq: 2 }, gsm('z'), 0, '', 'calm').kind, 'complete');
    assert.deepEqual(a.usageOf('calm'), { parts: 0, bytes: 0 }, 'given back');
    assert.equal(a.pendingBytes, 3 + 90);
    a.clear();
  });
});
