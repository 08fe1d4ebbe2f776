import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  carouselCardContent,
  characterCount,
  conversationWindow,
  CONVERSATION_WINDOW_MS,
  isConversationOpen,
  RCS_LIMITS,
  type RcsBody,
  rcsBodyLength,
  rcsBodyProblem,
  rcsPriceKind,
  type RcsSuggestion,
  validityOf,
  validitySeconds,
  withRcsDefaults,
} from '../../src/domain/rcs.ts';

const reply = (text = 'Yes', postbackData = 'yes'): RcsSuggestion => ({ type: 'REPLY', text, postbackData });
const card = (over: Record<string, unknown> = {}) => ({ title: 'Title', ...over });

test('limits are the API’s', () => {
  assert.deepEqual(
    [
      RCS_LIMITS.text,
      RCS_LIMITS.messageSuggestions,
      RCS_LIMITS.cardSuggestions,
      RCS_LIMITS.cardTitle,
      RCS_LIMITS.cardDescription,
      RCS_LIMITS.fileUrl,
      RCS_LIMITS.carouselMinCards,
      RCS_LIMITS.carouselMaxCards,
      RCS_LIMITS.suggestionText,
      RCS_LIMITS.postbackData,
      RCS_LIMITS.maxValiditySeconds,
    ],
    [3072, 11, 4, 200, 2000, 255, 2, 10, 25, 2048, 1_296_000],
  );
});

test('characters are counted as a person counts them', () => {
  assert.equal(characterCount('abc'), 3);
  assert.equal(characterCount('😀😀'), 2);
  assert.equal(characterCount('é'), 1);
  assert.equal(characterCount(''), 0);
});

test('TEXT: length and suggestions at and over their limits', () => {
  assert.equal(rcsBodyProblem({ type: 'TEXT', text: 'a'.repeat(3072) }), null);
  assert.equal(rcsBodyProblem({ type: 'TEXT', text: '😀'.repeat(3072) }), null, 'emoji count as one character');
  assert.deepEqual(rcsBodyProblem({ type: 'TEXT', text: 'a'.repeat(3073) }), { path: 'text', message: 'at most 3072 characters' });
  assert.deepEqual(rcsBodyProblem({ type: 'TEXT', text: '' }), { path: 'text', message: 'must not be empty' });
  const eleven = Array.from({ length: 11 }, () => reply());
  assert.equal(rcsBodyProblem({ type: 'TEXT', text: 'x', suggestions: eleven }), null);
  assert.deepEqual(rcsBodyProblem({ type: 'TEXT', text: 'x', suggestions: [...eleven, reply()] }), {
    path: 'suggestions',
    message: 'at most 11 suggestions',
  });
});

test('suggestions: text, postbackData and each type’s own fields', () => {
  const check = (s: RcsSuggestion) => rcsBodyProblem({ type: 'TEXT', text: 'x', suggestions: [reply(), s] });
  assert.equal(check(reply('a'.repeat(25))), null);
  assert.deepEqual(check(reply('a'.repeat(26))), { path: 'suggestions[1].text', message: 'at most 25 characters' });
  assert.equal(check(reply('ok', 'p'.repeat(2048))), null);
  assert.deepEqual(check(reply('ok', 'p'.repeat(2049))), { path: 'suggestions[1].postbackData', message: 'at most 2048 characters' });
  assert.equal(check({ type: 'OPEN_URL', text: 'Site', postbackData: 'u', url: 'https://example.com/x' }), null);
  assert.deepEqual(check({ type: 'OPEN_URL', text: 'Site', postbackData: 'u', url: 'example.com' }), {
    path: 'suggestions[1].url',
    message: 'must be an absolute URL',
  });
  assert.deepEqual(check({ type: 'OPEN_URL', text: 'Site', postbackData: 'u', url: 'ftp://example.com' }), {
    path: 'suggestions[1].url',
    message: 'must be an http or https URL',
  });
  assert.equal(check({ type: 'DIAL_PHONE', text: 'Call', postbackData: 'd', phoneNumber: '+33 1 23 45 67 89' }), null);
  assert.deepEqual(check({ type: 'DIAL_PHONE', text: 'Call', postbackData: 'd', phoneNumber: 'call me' }), {
    path: 'suggestions[1].phoneNumber',
    message: 'must be a phone number',
  });
  const event = { type: 'CREATE_CALENDAR_EVENT' as const, text: 'Save', postbackData: 'c', title: 'Visit' };
  assert.equal(check({ ...event, startTime: '2026-09-01T10:00:00', endTime: '2026-09-01T11:00:00Z' }), null);
  assert.deepEqual(check({ ...event, startTime: 'tomorrow', endTime: '2026-09-01T11:00:00' }), {
    path: 'suggestions[1].startTime',
    message: 'must be an ISO 8601 date',
  });
  assert.deepEqual(check({ ...event, startTime: '2026-09-01T10:00:00', endTime: '2026-09-01T09:00:00' }), {
    path: 'suggestions[1].endTime',
    message: 'must not be before startTime',
  });
  const where = { type: 'SHOW_LOCATION' as const, text: 'Map', postbackData: 'l' };
  assert.equal(check({ ...where, latitude: 48.85, longitude: 2.35, label: 'Paris' }), null);
  assert.deepEqual(check({ ...where, latitude: 91, longitude: 2.35 }), { path: 'suggestions[1].latitude', message: 'must be between -90 and 90' });
  assert.deepEqual(check({ ...where, latitude: 0, longitude: -181 }), { path: 'suggestions[1].longitude', message: 'must be between -180 and 180' });
  assert.equal(check({ type: 'REQUEST_LOCATION', text: 'Where?', postbackData: 'r' }), null);
});

test('CARD: a title or media, field limits, four suggestions in the card and eleven under it', () => {
  assert.equal(rcsBodyProblem({ type: 'CARD', content: { title: 'T' } }), null);
  assert.equal(rcsBodyProblem({ type: 'CARD', content: { media: { fileUrl: 'https://cdn.example.com/a.png', height: 'TALL' } } }), null);
  assert.deepEqual(rcsBodyProblem({ type: 'CARD', content: { description: 'only text' } }), {
    path: 'content',
    message: 'a card needs a title or media',
  });
  assert.deepEqual(rcsBodyProblem({ type: 'CARD', content: { title: '' } }), { path: 'content', message: 'a card needs a title or media' });
  assert.equal(rcsBodyProblem({ type: 'CARD', content: card({ title: 't'.repeat(200), description: 'd'.repeat(2000) }) }), null);
  assert.deepEqual(rcsBodyProblem({ type: 'CARD', content: card({ title: 't'.repeat(201) }) }), {
    path: 'content.title',
    message: 'at most 200 characters',
  });
  assert.deepEqual(rcsBodyProblem({ type: 'CARD', content: card({ description: 'd'.repeat(2001) }) }), {
    path: 'content.description',
    message: 'at most 2000 characters',
  });
  const url255 = `https://e.com/${'a'.repeat(255 - 14)}`;
  assert.equal(url255.length, 255);
  assert.equal(rcsBodyProblem({ type: 'CARD', content: { media: { fileUrl: url255 } } }), null);
  assert.deepEqual(rcsBodyProblem({ type: 'CARD', content: { media: { fileUrl: `${url255}b` } } }), {
    path: 'content.media.fileUrl',
    message: 'at most 255 characters',
  });
  assert.deepEqual(rcsBodyProblem({ type: 'CARD', content: { media: { fileUrl: 'not a url' } } }), {
    path: 'content.media.fileUrl',
    message: 'must be an absolute URL',
  });
  const four = Array.from({ length: 4 }, () => reply());
  assert.equal(rcsBodyProblem({ type: 'CARD', content: card({ suggestions: four }) }), null);
  assert.deepEqual(rcsBodyProblem({ type: 'CARD', content: card({ suggestions: [...four, reply()] }) }), {
    path: 'content.suggestions',
    message: 'at most 4 suggestions',
  });
  assert.deepEqual(rcsBodyProblem({ type: 'CARD', content: card({ suggestions: [reply('x'.repeat(26))] }) }), {
    path: 'content.suggestions[0].text',
    message: 'at most 25 characters',
  });
  const twelve = Array.from({ length: 12 }, () => reply());
  assert.deepEqual(rcsBodyProblem({ type: 'CARD', content: card(), suggestions: twelve }), { path: 'suggestions', message: 'at most 11 suggestions' });
});

test('CAROUSEL: 2 to 10 cards, in either form, each checked like a card', () => {
  const cards = (n: number) => Array.from({ length: n }, (_, i) => card({ title: `Card ${i}` }));
  assert.deepEqual(rcsBodyProblem({ type: 'CAROUSEL', contents: cards(1) }), { path: 'contents', message: '2 to 10 cards' });
  assert.equal(rcsBodyProblem({ type: 'CAROUSEL', contents: cards(2) }), null);
  assert.equal(rcsBodyProblem({ type: 'CAROUSEL', contents: cards(10) }), null);
  assert.deepEqual(rcsBodyProblem({ type: 'CAROUSEL', contents: cards(11) }), { path: 'contents', message: '2 to 10 cards' });
  const plain = cards(3);
  plain[2] = card({ title: 't'.repeat(201) });
  assert.deepEqual(rcsBodyProblem({ type: 'CAROUSEL', contents: plain }), { path: 'contents[2].title', message: 'at most 200 characters' });
  const wrapped = cards(3).map((c) => ({ content: c }));
  wrapped[2] = { content: card({ title: 't'.repeat(201) }) };
  assert.deepEqual(rcsBodyProblem({ type: 'CAROUSEL', contents: wrapped }), {
    path: 'contents[2].content.title',
    message: 'at most 200 characters',
  });
  assert.deepEqual(rcsBodyProblem({ type: 'CAROUSEL', contents: [card(), {}] }), { path: 'contents[1]', message: 'a card needs a title or media' });
  assert.deepEqual(carouselCardContent({ content: { title: 'A' } }), { title: 'A' });
  assert.deepEqual(carouselCardContent({ title: 'B' }), { title: 'B' });
});

test('FILE: file and thumbnail URLs', () => {
  assert.equal(rcsBodyProblem({ type: 'FILE', fileUrl: 'https://cdn.example.com/a.pdf', filename: 'a.pdf', contentType: 'application/pdf' }), null);
  assert.deepEqual(rcsBodyProblem({ type: 'FILE', fileUrl: 'file:///etc/passwd' }), { path: 'fileUrl', message: 'must be an http or https URL' });
  assert.deepEqual(rcsBodyProblem({ type: 'FILE', fileUrl: 'https://e.com/a', thumbnailUrl: 'x' }), {
    path: 'thumbnailUrl',
    message: 'must be an absolute URL',
  });
});

test('defaults: a carousel is MEDIUM wide unless told; other bodies are left as sent', () => {
  const carousel: RcsBody = { type: 'CAROUSEL', contents: [card(), card()] };
  assert.equal((withRcsDefaults(carousel) as { cardWidth?: string }).cardWidth, 'MEDIUM');
  assert.equal((withRcsDefaults({ ...carousel, cardWidth: 'SMALL' }) as { cardWidth?: string }).cardWidth, 'SMALL');
  const text: RcsBody = { type: 'TEXT', text: 'x' };
  assert.deepEqual(withRcsDefaults(text), text);
  assert.equal(rcsBodyLength({ type: 'TEXT', text: 'héllo😀' }), 6);
  assert.equal(rcsBodyLength({ type: 'CARD', content: card() }), 0);
});

test('validity: units, at least one second, at most 15 days; shown in the largest exact unit', () => {
  assert.deepEqual(validitySeconds({ amount: 30, timeUnit: 'SECONDS' }), { ok: true, seconds: 30 });
  assert.deepEqual(validitySeconds({ amount: 5, timeUnit: 'MINUTES' }), { ok: true, seconds: 300 });
  assert.deepEqual(validitySeconds({ amount: 2, timeUnit: 'HOURS' }), { ok: true, seconds: 7200 });
  assert.deepEqual(validitySeconds({ amount: 15, timeUnit: 'DAYS' }), { ok: true, seconds: 1_296_000 });
  assert.deepEqual(validitySeconds({ amount: 16, timeUnit: 'DAYS' }), { ok: false, reason: 'at most 15 days' });
  assert.deepEqual(validitySeconds({ amount: 361, timeUnit: 'HOURS' }), { ok: false, reason: 'at most 15 days' });
  assert.deepEqual(validitySeconds({ amount: 0, timeUnit: 'SECONDS' }), { ok: false, reason: 'amount must be a positive integer' });
  assert.deepEqual(validitySeconds({ amount: 1.5, timeUnit: 'HOURS' }), { ok: false, reason: 'amount must be a positive integer' });
  assert.equal(validitySeconds({ amount: 1, timeUnit: 'WEEKS' as never }).ok, false);
  assert.deepEqual(validityOf(172_800), { amount: 2, timeUnit: 'DAYS' });
  assert.deepEqual(validityOf(5_400), { amount: 90, timeUnit: 'MINUTES' });
  assert.deepEqual(validityOf(7_200), { amount: 2, timeUnit: 'HOURS' });
  assert.deepEqual(validityOf(61), { amount: 61, timeUnit: 'SECONDS' });
});

test('price kind: BASIC for a short plain text, SINGLE for anything richer, CONVERSATION inside a conversation', () => {
  assert.equal(rcsPriceKind({ type: 'TEXT', text: 'a'.repeat(160) }, false), 'BASIC');
  assert.equal(rcsPriceKind({ type: 'TEXT', text: '😀'.repeat(160) }, false), 'BASIC');
  assert.equal(rcsPriceKind({ type: 'TEXT', text: 'a'.repeat(161) }, false), 'SINGLE');
  assert.equal(rcsPriceKind({ type: 'TEXT', text: 'hi', suggestions: [] }, false), 'BASIC');
  assert.equal(rcsPriceKind({ type: 'TEXT', text: 'hi', suggestions: [reply()] }, false), 'SINGLE');
  assert.equal(rcsPriceKind({ type: 'CARD', content: card() }, false), 'SINGLE');
  assert.equal(rcsPriceKind({ type: 'CAROUSEL', contents: [card(), card()] }, false), 'SINGLE');
  assert.equal(rcsPriceKind({ type: 'FILE', fileUrl: 'https://e.com/a' }, false), 'SINGLE');
  assert.equal(rcsPriceKind({ type: 'TEXT', text: 'hi' }, true), 'CONVERSATION');
  assert.equal(rcsPriceKind({ type: 'CARD', content: card() }, true), 'CONVERSATION');
});

test('a conversation is open for 24 hours from the MO that opened it', () => {
  const w = conversationWindow(1_000);
  assert.deepEqual(w, { openedAt: 1_000, expiresAt: 1_000 + CONVERSATION_WINDOW_MS });
  assert.equal(CONVERSATION_WINDOW_MS, 86_400_000);
  assert.equal(isConversationOpen(w, 999), false);
  assert.equal(isConversationOpen(w, 1_000), true);
  assert.equal(isConversationOpen(w, 1_000 + CONVERSATION_WINDOW_MS - 1), true);
  assert.equal(isConversationOpen(w, 1_000 + CONVERSATION_WINDOW_MS), false);
});
