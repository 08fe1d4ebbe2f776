import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { carriesOptOutMention, checkOptOutShortCode, checkOptOutText, isOptOutReply, optOutLine, optOutSettings } from '../../src/domain/opt-out.ts';
import { type RegisteredSender, senderKindOf, senderRefusal } from '../../src/domain/senders.ts';

const sender = (over: Partial<RegisteredSender>): RegisteredSender => ({
  id: 's',
  organisationId: 'o',
  value: 'ACME',
  kind: 'ALPHANUMERIC',
  countries: [],
  status: 'APPROVED',
  createdAt: 0,
  updatedAt: 0,
  ...over,
});

test('sender kinds: names up to 11 characters, short codes of 3 to 8 digits, numbers of 9 to 15', () => {
  assert.deepEqual(senderKindOf('ACME'), { ok: true, kind: 'ALPHANUMERIC' });
  assert.deepEqual(senderKindOf('Acme Shop.1'), { ok: true, kind: 'ALPHANUMERIC' });
  assert.deepEqual(senderKindOf('36111'), { ok: true, kind: 'SHORT_CODE' });
  assert.deepEqual(senderKindOf('33612345678'), { ok: true, kind: 'LONG_NUMBER' });
  for (const bad of ['', '12', '1234567890123456', 'ACMEACMEACME', 'Ac<me>', 'émetteur']) assert.equal(senderKindOf(bad).ok, false, bad);
});

test('any string is a kind or a reason, never an exception; what is accepted fits its kind (property)', () => {
  fc.assert(
    fc.property(fc.string({ maxLength: 20 }), (value) => {
      const k = senderKindOf(value);
      if (!k.ok) return assert.match(k.reason, /characters|digits|letters/);
      if (k.kind === 'ALPHANUMERIC') assert.ok(value.length >= 1 && value.length <= 11 && /^[A-Za-z0-9 .\-_&]+$/.test(value));
      else assert.match(value, k.kind === 'SHORT_CODE' ? /^\d{3,8}$/ : /^\d{9,15}$/);
    }),
    { seed: 20261207, numRuns: 3000 },
  );
});

test('a registered sender goes only APPROVED and in its countries', () => {
  assert.equal(senderRefusal(sender({}), 'GB'), null);
  assert.equal(senderRefusal(sender({ countries: ['FR'] }), 'FR'), null);
  assert.match(senderRefusal(sender({ countries: ['FR'] }), 'GB')!, /not approved for GB \(approved for FR\)/);
  assert.match(senderRefusal(sender({ countries: ['FR'] }), null)!, /not approved for this destination/);
  assert.match(senderRefusal(sender({ status: 'PENDING' }), 'FR')!, /not approved yet \(PENDING\)/);
  assert.match(senderRefusal(sender({ status: 'REJECTED' }), 'FR')!, /REJECTED/);
  assert.equal(senderRefusal(sender({ countries: ['GB'] }), 'FR', true), null, 'status alone, before the recipients are known');
  assert.match(senderRefusal(sender({ status: 'PENDING', countries: ['GB'] }), null, true)!, /PENDING/);
});

test('the mention: always on marketing to France, else as asked; the platform default and custom settings', () => {
  assert.equal(carriesOptOutMention(false, 'MARKETING', 'FR'), true);
  assert.equal(carriesOptOutMention(undefined, 'MARKETING', 'FR'), true);
  assert.equal(carriesOptOutMention(false, 'MARKETING', 'GB'), false);
  assert.equal(carriesOptOutMention(true, 'MARKETING', 'GB'), true);
  assert.equal(carriesOptOutMention(false, 'TRANSACTIONAL', 'FR'), false);
  assert.equal(carriesOptOutMention(true, 'OTP', 'FR'), true);
  assert.equal(optOutLine(optOutSettings(null, null)), '\nSTOP au 36111');
  assert.equal(optOutLine(optOutSettings('38000', null)), '\nSTOP au 38000');
  assert.equal(optOutLine(optOutSettings('38000', 'STOP SMS 38000')), '\nSTOP SMS 38000');
  assert.equal(checkOptOutShortCode('36111'), null);
  for (const bad of ['12', '123456789', '3611a', ' 36111']) assert.ok(checkOptOutShortCode(bad), bad);
  assert.equal(checkOptOutText('STOP au 36111'), null);
  for (const bad of ['', '   ', 'Unsubscribe', 'STOP\nau', 'STOP '.repeat(20)]) assert.ok(checkOptOutText(bad), JSON.stringify(bad));
});

test('a STOP reply to a short code: the word alone, or with the code, any case; not inside a sentence', () => {
  for (const yes of ['STOP', 'stop', ' Stop. ', 'Arrêt', 'STOP 36111', 'stop au 36111', 'STOP36111', '36111 STOP', 'Stop Au 36111'])
    assert.equal(isOptOutReply(yes, '36111'), true, yes);
  for (const no of ['stop sending this', 'please stop 36111 now', 'STOP 38000', 'hello 36111', '36111', 'STOPPED 36111'])
    assert.equal(isOptOutReply(no, '36111'), false, no);
});
