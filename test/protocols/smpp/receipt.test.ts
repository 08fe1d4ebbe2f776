import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  formatReceiptDate,
  formatReceiptText,
  formatSmppTime,
  MESSAGE_STATE,
  messageState,
  parseReceiptDate,
  parseReceiptText,
  parseSmppTime,
  SmppTimeError,
  statForMessageState,
} from '../../../src/protocols/smpp/receipt.ts';

const submitDate = new Date('2026-03-04T05:06:59Z');
const doneDate = new Date('2026-12-31T23:59:00Z');

describe('formatReceiptText', () => {
  it('writes the standard fields with UTC dates and a 20-character text', () => {
    const s = formatReceiptText({
      id: '0190b6f4-0000-7000-8000-000000000001',
      submitDate,
      doneDate,
      stat: 'DELIVRD',
      err: 0,
      text: 'Hello world, this is longer than twenty characters',
    });
    assert.equal(
      s,
      'id:0190b6f4-0000-7000-8000-000000000001 sub:001 dlvrd:001 submit date:2603040506 ' +
        'done date:2612312359 stat:DELIVRD err:000 text:Hello world, this is',
    );
  });

  it('reports zero delivered parts for a failure and pads counts and numeric errors', () => {
    const s = formatReceiptText({ id: 'x', sub: 3, submitDate, doneDate, stat: 'UNDELIV', err: 34 });
    assert.match(s, / sub:003 dlvrd:000 /);
    assert.match(s, / stat:UNDELIV err:034 text:$/);
  });

  it('keeps a string error code as it is and never splits a surrogate pair', () => {
    const text = '😀'.repeat(25);
    const s = formatReceiptText({ id: 'x', submitDate, doneDate, stat: 'EXPIRED', err: 'A1F', text });
    assert.match(s, /err:A1F /);
    assert.equal(s.split('text:')[1], '😀'.repeat(20));
  });

  it('refuses negative or fractional counts', () => {
    assert.throws(() => formatReceiptText({ id: 'x', sub: -1, submitDate, doneDate, stat: 'DELIVRD' }), RangeError);
    assert.throws(() => formatReceiptText({ id: 'x', dlvrd: 1.5, submitDate, doneDate, stat: 'DELIVRD' }), RangeError);
  });

  it('formats dates as YYMMDDhhmm in UTC', () => {
    assert.equal(formatReceiptDate(new Date('2030-01-09T08:07:00+02:00')), '3001090607');
  });
});

describe('parseReceiptText', () => {
  it('reads back what formatReceiptText writes', () => {
    const s = formatReceiptText({
      id: 'abc123',
      sub: 2,
      dlvrd: 1,
      submitDate,
      doneDate,
      stat: 'REJECTD',
      err: 5,
      text: 'hi: there',
    });
    assert.deepEqual(parseReceiptText(s), {
      id: 'abc123',
      sub: 2,
      dlvrd: 1,
      submitDate: new Date('2026-03-04T05:06:00Z'),
      doneDate: new Date('2026-12-31T23:59:00Z'),
      stat: 'REJECTD',
      err: '005',
      text: 'hi: there',
    });
  });

  it('tolerates case, extra spaces, underscores, long stat names and missing fields', () => {
    const r = parseReceiptText('ID: 0A1b  SUB:1   Submit_Date:2601020304  DONE DATE : 260102030455 Stat:delivered');
    assert.deepEqual(r, {
      id: '0A1b',
      sub: 1,
      submitDate: new Date('2026-01-02T03:04:00Z'),
      doneDate: new Date('2026-01-02T03:04:55Z'),
      stat: 'DELIVRD',
    });
  });

  it('leaves out what cannot be read instead of guessing', () => {
    const r = parseReceiptText('id:7 sub:abc submit date:2613450000 done date:99 stat:UNDELIV err:');
    assert.deepEqual(r, { id: '7', stat: 'UNDELIV' });
  });

  it('does not take the next field for a missing id, and returns null without an id', () => {
    assert.equal(parseReceiptText('id: sub:001 dlvrd:001 stat:DELIVRD'), null);
    assert.equal(parseReceiptText('stat:DELIVRD err:000'), null);
    assert.equal(parseReceiptText(''), null);
  });

  it('does not read fields inside the text part', () => {
    const r = parseReceiptText('id:1 stat:DELIVRD text:id:2 stat:UNDELIV');
    assert.equal(r?.id, '1');
    assert.equal(r?.stat, 'DELIVRD');
    assert.equal(r?.text, 'id:2 stat:UNDELIV');
  });

  it('parses receipt dates of 10 and 12 digits only', () => {
    assert.deepEqual(parseReceiptDate('2602281200'), new Date('2026-02-28T12:00:00Z'));
    assert.equal(parseReceiptDate('2602291200'), undefined); // 2026 is not a leap year
    assert.equal(parseReceiptDate('26022812'), undefined);
  });
});

describe('message_state', () => {
  it('uses the SMPP 3.4 §5.2.28 numbers', () => {
    assert.equal(messageState('DELIVRD'), 2);
    assert.equal(messageState('EXPIRED'), 3);
    assert.equal(messageState('DELETED'), 4);
    assert.equal(messageState('UNDELIV'), 5);
    assert.equal(messageState('ACCEPTD'), 6);
    assert.equal(messageState('UNKNOWN'), 7);
    assert.equal(messageState('REJECTD'), 8);
    assert.equal(MESSAGE_STATE.ENROUTE, 1);
  });

  it('maps numbers back to stat words, unknown numbers to UNKNOWN', () => {
    assert.equal(statForMessageState(5), 'UNDELIV');
    assert.equal(statForMessageState(42), 'UNKNOWN');
  });
});

describe('parseSmppTime', () => {
  const now = new Date('2026-01-31T10:00:00Z');

  it('treats an empty string as not set', () => {
    assert.equal(parseSmppTime('', now), null);
  });

  it('reads absolute times with quarter-hour offsets both ways', () => {
    assert.deepEqual(parseSmppTime('260315123000000+', now), new Date('2026-03-15T12:30:00.000Z'));
    // 14:30 local, 8 quarter hours (2 h) ahead of UTC → 12:30 UTC
    assert.deepEqual(parseSmppTime('260315143005308+', now), new Date('2026-03-15T12:30:05.300Z'));
    // 08:30 local, 16 quarter hours (4 h) behind UTC → 12:30 UTC
    assert.deepEqual(parseSmppTime('260315083000016-', now), new Date('2026-03-15T12:30:00.000Z'));
  });

  it('reads relative times from now, calendar units included', () => {
    assert.deepEqual(parseSmppTime('000000010000000R', now), new Date('2026-01-31T11:00:00Z'));
    assert.deepEqual(parseSmppTime('000001000130000R', now), new Date('2026-02-01T10:01:30Z'));
    assert.deepEqual(parseSmppTime('010000000000000R', now), new Date('2027-01-31T10:00:00Z'));
  });

  it('refuses malformed strings and impossible dates', () => {
    for (const bad of [
      '2603151230',
      '260315123000000',
      '260315123000000X',
      '261315123000000+',
      '260230123000000+',
      '260315243000000+',
      '260315126000000+',
      '260315123000049+',
      'aa0315123000000+',
      ' 60315123000000+',
    ]) {
      assert.throws(() => parseSmppTime(bad, now), SmppTimeError, bad);
    }
  });

  it('writes absolute UTC times that it reads back', () => {
    const d = new Date('2026-07-08T09:10:11.700Z');
    assert.equal(formatSmppTime(d), '260708091011700+');
    assert.deepEqual(parseSmppTime(formatSmppTime(d), now), d);
  });
});
