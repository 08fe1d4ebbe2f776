/**
 * Tern's RCS bodies as Google RBM `AgentMessage`s (reference: phones.agentMessages, AgentContentMessage, RichCard,
 * Suggestion). Pure: what RBM cannot carry is said by `rbmBodyProblem`, asked at accept; `agentContentMessage`
 * maps a body that has none.
 */
import { parseApiDate } from '../../domain/dates.ts';
import { carouselCardContent, DEFAULT_CARD_WIDTH, type RcsBody, type RcsBodyProblem, type RcsCardContent, type RcsSuggestion } from '../../domain/rcs.ts';

/** RBM's `messageTrafficType` values. */
export type RbmTrafficType = 'AUTHENTICATION' | 'TRANSACTION' | 'PROMOTION' | 'SERVICEREQUEST' | 'ACKNOWLEDGEMENT';

/** The kind of traffic a channel's flow declares: one-time passwords, transactions, marketing. */
export function trafficType(flow: string | undefined): RbmTrafficType | undefined {
  switch (flow) {
    case 'OTP':
      return 'AUTHENTICATION';
    case 'TRANSACTIONAL':
      return 'TRANSACTION';
    case 'MARKETING':
      return 'PROMOTION';
    default:
      return undefined;
  }
}

/** RBM keeps an undelivered message at most this long (`ttl`), in seconds. */
export const RBM_MAX_TTL_SECONDS = 15 * 86_400;

/** `ttl` as a protobuf Duration (`"3600s"`): what is left of the validity, at least a second, at most 15 days. */
export function ttlOf(validityUntil: number | null, now: number): string | undefined {
  if (validityUntil === null) return undefined;
  const seconds = Math.min(RBM_MAX_TTL_SECONDS, Math.max(1, Math.ceil((validityUntil - now) / 1000)));
  return `${seconds}s`;
}

/** A phone number as RBM's dialAction wants it (E.164), from the forms Tern accepts; null when it is not one. */
export function e164(phone: string): string | null {
  let p = phone.replace(/[\s().-]/g, '');
  if (p.startsWith('00')) p = `+${p.slice(2)}`;
  if (!p.startsWith('+')) p = `+${p}`;
  return /^\+[1-9][0-9]{6,14}$/.test(p) ? p : null;
}

function suggestionProblem(s: RcsSuggestion, path: string): RcsBodyProblem | null {
  if (s.type === 'DIAL_PHONE' && (s.phoneNumber === undefined || e164(s.phoneNumber) === null)) {
    return { path: `${path}.phoneNumber`, message: 'RBM dials international numbers only (E.164, e.g. +33612345678)' };
  }
  return null;
}

function suggestionsProblem(list: RcsSuggestion[] | undefined, path: string): RcsBodyProblem | null {
  for (const [i, s] of (list ?? []).entries()) {
    const p = suggestionProblem(s, `${path}[${i}]`);
    if (p) return p;
  }
  return null;
}

/**
 * What of a body (already valid for Tern) RBM has no place for: a file's name and type (RBM reads them from the
 * file's URL and its Content-Type), TALL media in a carousel of SMALL cards, a number to dial that is not
 * international. Returns the first problem, or null.
 */
export function rbmBodyProblem(body: RcsBody): RcsBodyProblem | null {
  switch (body.type) {
    case 'TEXT':
      return suggestionsProblem(body.suggestions, 'suggestions');
    case 'CARD':
      return suggestionsProblem(body.content.suggestions, 'content.suggestions') ?? suggestionsProblem(body.suggestions, 'suggestions');
    case 'CAROUSEL':
      for (const [i, card] of body.contents.entries()) {
        const path = 'content' in card && card.content !== undefined ? `contents[${i}].content` : `contents[${i}]`;
        const c = carouselCardContent(card);
        if ((body.cardWidth ?? DEFAULT_CARD_WIDTH) === 'SMALL' && c.media?.height === 'TALL') {
          return { path: `${path}.media.height`, message: 'RBM has no TALL media in a carousel of SMALL cards' };
        }
        const p = suggestionsProblem(c.suggestions, `${path}.suggestions`);
        if (p) return p;
      }
      return null;
    case 'FILE':
      if (body.filename !== undefined) return { path: 'filename', message: 'RBM takes a file’s name from its URL; leave filename out' };
      if (body.contentType !== undefined) {
        return { path: 'contentType', message: 'RBM takes a file’s type from the Content-Type its URL answers with; leave contentType out' };
      }
      return null;
  }
}

function isoInstant(value: string | undefined): string | undefined {
  return value === undefined ? undefined : (parseApiDate(value)?.toISOString() ?? value);
}

/** One suggestion: a `reply`, or an `action` with its one native action. */
export function rbmSuggestion(s: RcsSuggestion): Record<string, unknown> {
  const common = { text: s.text, postbackData: s.postbackData };
  switch (s.type) {
    case 'REPLY':
      return { reply: common };
    case 'OPEN_URL':
      return { action: { ...common, openUrlAction: { url: s.url } } };
    case 'DIAL_PHONE':
      return { action: { ...common, dialAction: { phoneNumber: e164(s.phoneNumber ?? '') } } };
    case 'CREATE_CALENDAR_EVENT':
      return {
        action: {
          ...common,
          createCalendarEventAction: {
            startTime: isoInstant(s.startTime),
            endTime: isoInstant(s.endTime),
            title: s.title,
            ...(s.description !== undefined && { description: s.description }),
          },
        },
      };
    case 'SHOW_LOCATION':
      return {
        action: {
          ...common,
          viewLocationAction: { latLong: { latitude: s.latitude, longitude: s.longitude }, ...(s.label !== undefined && { label: s.label }) },
        },
      };
    case 'REQUEST_LOCATION':
      return { action: { ...common, shareLocationAction: {} } };
  }
}

function suggestionList(list: RcsSuggestion[] | undefined): { suggestions?: Record<string, unknown>[] } {
  return list && list.length > 0 ? { suggestions: list.map(rbmSuggestion) } : {};
}

/** A card's content; media without a height is MEDIUM, the height RBM shows when it has to choose. */
function cardContent(c: RcsCardContent): Record<string, unknown> {
  return {
    ...(c.title !== undefined && { title: c.title }),
    ...(c.description !== undefined && { description: c.description }),
    ...(c.media && { media: { height: c.media.height ?? 'MEDIUM', contentInfo: { fileUrl: c.media.fileUrl } } }),
    ...suggestionList(c.suggestions),
  };
}

/** The `contentMessage` of an AgentMessage: exactly one of text, contentInfo or richCard, and the chips. */
export function agentContentMessage(body: RcsBody): Record<string, unknown> {
  switch (body.type) {
    case 'TEXT':
      return { text: body.text, ...suggestionList(body.suggestions) };
    case 'CARD':
      return {
        richCard: { standaloneCard: { cardOrientation: body.orientation ?? 'VERTICAL', cardContent: cardContent(body.content) } },
        ...suggestionList(body.suggestions),
      };
    case 'CAROUSEL':
      return {
        richCard: {
          carouselCard: { cardWidth: body.cardWidth ?? DEFAULT_CARD_WIDTH, cardContents: body.contents.map((c) => cardContent(carouselCardContent(c))) },
        },
      };
    case 'FILE':
      return { contentInfo: { fileUrl: body.fileUrl, ...(body.thumbnailUrl !== undefined && { thumbnailUrl: body.thumbnailUrl }) } };
  }
}

/** The whole AgentMessage of a submit. */
export function agentMessage(body: RcsBody, flow: string | undefined, validityUntil: number | null, now: number): Record<string, unknown> {
  const traffic = trafficType(flow);
  const ttl = ttlOf(validityUntil, now);
  return {
    contentMessage: agentContentMessage(body),
    ...(traffic !== undefined && { messageTrafficType: traffic }),
    ...(ttl !== undefined && { ttl }),
  };
}
