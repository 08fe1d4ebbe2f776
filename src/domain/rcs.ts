import { parseApiDate } from './dates.ts';

/** The RCS API's limits (smsmode's, as its OpenAPI document gives them). */
export const RCS_LIMITS = {
  text: 3072,
  messageSuggestions: 11,
  cardSuggestions: 4,
  cardTitle: 200,
  cardDescription: 2000,
  fileUrl: 255,
  carouselMinCards: 2,
  carouselMaxCards: 10,
  suggestionText: 25,
  postbackData: 2048,
  calendarTitle: 100,
  calendarDescription: 500,
  locationLabel: 100,
  /** A TEXT message up to this many characters and without suggestions is a BASIC message. */
  basicText: 160,
  maxValiditySeconds: 15 * 86_400,
} as const;

export const RCS_BODY_TYPES = ['TEXT', 'CARD', 'CAROUSEL', 'FILE'] as const;

export const RCS_SUGGESTION_TYPES = ['REPLY', 'OPEN_URL', 'DIAL_PHONE', 'CREATE_CALENDAR_EVENT', 'SHOW_LOCATION', 'REQUEST_LOCATION'] as const;
export type RcsSuggestionType = (typeof RCS_SUGGESTION_TYPES)[number];

export const RCS_MEDIA_HEIGHTS = ['SHORT', 'MEDIUM', 'TALL'] as const;
export const RCS_CARD_ORIENTATIONS = ['VERTICAL', 'HORIZONTAL'] as const;
export const RCS_CARD_WIDTHS = ['SMALL', 'MEDIUM'] as const;
export const DEFAULT_CARD_WIDTH = 'MEDIUM';

/** `body.type` of an inbound (MO) RCS message. */
export const RCS_MO_BODY_TYPES = ['TEXT', 'SUGGESTION', 'LOCATION', 'FILE'] as const;

export interface RcsSuggestion {
  type: RcsSuggestionType;
  text: string;
  postbackData: string;
  url?: string;
  phoneNumber?: string;
  startTime?: string;
  endTime?: string;
  title?: string;
  description?: string;
  latitude?: number;
  longitude?: number;
  label?: string;
}

export interface RcsCardContent {
  title?: string;
  description?: string;
  media?: { fileUrl: string; height?: string };
  suggestions?: RcsSuggestion[];
}

/** A carousel card: the content object itself (smsmode's form) or wrapped as `{ content }`. */
export type RcsCarouselCard = RcsCardContent | { content: RcsCardContent };

export type RcsBody =
  | { type: 'TEXT'; text: string; suggestions?: RcsSuggestion[] }
  | { type: 'CARD'; content: RcsCardContent; orientation?: string; suggestions?: RcsSuggestion[] }
  | { type: 'CAROUSEL'; contents: RcsCarouselCard[]; cardWidth?: string }
  | { type: 'FILE'; fileUrl: string; thumbnailUrl?: string; filename?: string; contentType?: string };

export interface RcsBodyProblem {
  /** Path inside the message body, e.g. `contents[2].content.title`. */
  path: string;
  message: string;
}

/** Characters as a person counts them (code points), the way the length limits are meant. */
export function characterCount(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

function urlProblem(value: string): string | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be an absolute URL';
  }
  return url.protocol === 'http:' || url.protocol === 'https:' ? null : 'must be an http or https URL';
}

function suggestionProblem(s: RcsSuggestion, path: string): RcsBodyProblem | null {
  if (characterCount(s.text) > RCS_LIMITS.suggestionText) {
    return { path: `${path}.text`, message: `at most ${RCS_LIMITS.suggestionText} characters` };
  }
  if (characterCount(s.postbackData) > RCS_LIMITS.postbackData) {
    return { path: `${path}.postbackData`, message: `at most ${RCS_LIMITS.postbackData} characters` };
  }
  switch (s.type) {
    case 'OPEN_URL': {
      const p = s.url === undefined ? 'is required' : urlProblem(s.url);
      return p ? { path: `${path}.url`, message: p } : null;
    }
    case 'DIAL_PHONE':
      return s.phoneNumber && /^\+?[0-9]{3,20}$/.test(s.phoneNumber.replace(/[\s.-]/g, ''))
        ? null
        : { path: `${path}.phoneNumber`, message: 'must be a phone number' };
    case 'CREATE_CALENDAR_EVENT': {
      const start = s.startTime === undefined ? null : parseApiDate(s.startTime);
      if (!start) return { path: `${path}.startTime`, message: 'must be an ISO 8601 date' };
      const end = s.endTime === undefined ? null : parseApiDate(s.endTime);
      if (!end) return { path: `${path}.endTime`, message: 'must be an ISO 8601 date' };
      if (end.getTime() < start.getTime()) return { path: `${path}.endTime`, message: 'must not be before startTime' };
      if (!s.title) return { path: `${path}.title`, message: 'is required' };
      return null;
    }
    case 'SHOW_LOCATION':
      if (s.latitude === undefined || s.latitude < -90 || s.latitude > 90) {
        return { path: `${path}.latitude`, message: 'must be between -90 and 90' };
      }
      if (s.longitude === undefined || s.longitude < -180 || s.longitude > 180) {
        return { path: `${path}.longitude`, message: 'must be between -180 and 180' };
      }
      return null;
    default:
      return null;
  }
}

function suggestionsProblem(list: RcsSuggestion[] | undefined, max: number, path: string): RcsBodyProblem | null {
  if (!list) return null;
  if (list.length > max) return { path, message: `at most ${max} suggestions` };
  for (const [i, s] of list.entries()) {
    const p = suggestionProblem(s, `${path}[${i}]`);
    if (p) return p;
  }
  return null;
}

function cardProblem(c: RcsCardContent, path: string): RcsBodyProblem | null {
  if (!c.title && !c.media) return { path, message: 'a card needs a title or media' };
  if (c.title !== undefined && characterCount(c.title) > RCS_LIMITS.cardTitle) {
    return { path: `${path}.title`, message: `at most ${RCS_LIMITS.cardTitle} characters` };
  }
  if (c.description !== undefined && characterCount(c.description) > RCS_LIMITS.cardDescription) {
    return { path: `${path}.description`, message: `at most ${RCS_LIMITS.cardDescription} characters` };
  }
  if (c.media) {
    const p = fileUrlProblem(c.media.fileUrl);
    if (p) return { path: `${path}.media.fileUrl`, message: p };
  }
  return suggestionsProblem(c.suggestions, RCS_LIMITS.cardSuggestions, `${path}.suggestions`);
}

function fileUrlProblem(value: string): string | null {
  if (value.length > RCS_LIMITS.fileUrl) return `at most ${RCS_LIMITS.fileUrl} characters`;
  return urlProblem(value);
}

/** The content of a carousel card, whichever of its two forms it was sent in. */
export function carouselCardContent(card: RcsCarouselCard): RcsCardContent {
  return 'content' in card && card.content !== undefined ? card.content : (card as RcsCardContent);
}

/**
 * The rules of an RCS body that are not mere shape: lengths and counts, a card's title or media, URLs, dates and
 * coordinates of suggestions. Returns the first problem, or null.
 */
export function rcsBodyProblem(body: RcsBody): RcsBodyProblem | null {
  switch (body.type) {
    case 'TEXT':
      if (characterCount(body.text) === 0) return { path: 'text', message: 'must not be empty' };
      if (characterCount(body.text) > RCS_LIMITS.text) return { path: 'text', message: `at most ${RCS_LIMITS.text} characters` };
      return suggestionsProblem(body.suggestions, RCS_LIMITS.messageSuggestions, 'suggestions');
    case 'CARD':
      return cardProblem(body.content, 'content') ?? suggestionsProblem(body.suggestions, RCS_LIMITS.messageSuggestions, 'suggestions');
    case 'CAROUSEL': {
      const n = body.contents.length;
      if (n < RCS_LIMITS.carouselMinCards || n > RCS_LIMITS.carouselMaxCards) {
        return { path: 'contents', message: `${RCS_LIMITS.carouselMinCards} to ${RCS_LIMITS.carouselMaxCards} cards` };
      }
      for (const [i, card] of body.contents.entries()) {
        const wrapped = 'content' in card && card.content !== undefined;
        const p = cardProblem(carouselCardContent(card), wrapped ? `contents[${i}].content` : `contents[${i}]`);
        if (p) return p;
      }
      return null;
    }
    case 'FILE': {
      const p = fileUrlProblem(body.fileUrl);
      if (p) return { path: 'fileUrl', message: p };
      if (body.thumbnailUrl !== undefined) {
        const t = fileUrlProblem(body.thumbnailUrl);
        if (t) return { path: 'thumbnailUrl', message: t };
      }
      return null;
    }
  }
}

/** The body as stored and echoed: the request's, with the documented defaults filled in. */
export function withRcsDefaults(body: RcsBody): RcsBody {
  if (body.type === 'CAROUSEL' && body.cardWidth === undefined) return { ...body, cardWidth: DEFAULT_CARD_WIDTH };
  return body;
}

export const RCS_VALIDITY_UNITS = { SECONDS: 1, MINUTES: 60, HOURS: 3_600, DAYS: 86_400 } as const;
export type RcsValidityUnit = keyof typeof RCS_VALIDITY_UNITS;

export interface RcsValidity {
  amount: number;
  timeUnit: RcsValidityUnit;
}

/** Seconds of a validity, or the reason it is not acceptable (at least one second, at most 15 days). */
export function validitySeconds(v: RcsValidity): { ok: true; seconds: number } | { ok: false; reason: string } {
  const unit = RCS_VALIDITY_UNITS[v.timeUnit];
  if (unit === undefined) return { ok: false, reason: `timeUnit must be one of ${Object.keys(RCS_VALIDITY_UNITS).join(', ')}` };
  if (!Number.isInteger(v.amount) || v.amount < 1) return { ok: false, reason: 'amount must be a positive integer' };
  const seconds = v.amount * unit;
  if (seconds > RCS_LIMITS.maxValiditySeconds) return { ok: false, reason: 'at most 15 days' };
  return { ok: true, seconds };
}

/** A validity in the largest unit that expresses the seconds exactly (172800 → 2 DAYS). */
export function validityOf(seconds: number): RcsValidity {
  for (const unit of ['DAYS', 'HOURS', 'MINUTES'] as const) {
    const size = RCS_VALIDITY_UNITS[unit];
    if (seconds >= size && seconds % size === 0) return { amount: seconds / size, timeUnit: unit };
  }
  return { amount: seconds, timeUnit: 'SECONDS' };
}

/**
 * The RCS business model's charge kinds: BASIC (a TEXT of at most 160 characters without suggestions), SINGLE
 * (anything richer), CONVERSATION (an agent message inside a conversation the user opened: one charge per
 * conversation).
 */
export type RcsPriceKind = 'BASIC' | 'SINGLE' | 'CONVERSATION';

export function rcsPriceKind(body: RcsBody, inConversation: boolean): RcsPriceKind {
  if (inConversation) return 'CONVERSATION';
  if (body.type === 'TEXT' && characterCount(body.text) <= RCS_LIMITS.basicText && !body.suggestions?.length) {
    return 'BASIC';
  }
  return 'SINGLE';
}

/** A user's MO opens a conversation for this long; agent messages sent within it belong to it. */
export const CONVERSATION_WINDOW_MS = 24 * 3_600_000;

export interface ConversationWindow {
  openedAt: number;
  expiresAt: number;
}

export function conversationWindow(openedAt: number): ConversationWindow {
  return { openedAt, expiresAt: openedAt + CONVERSATION_WINDOW_MS };
}

export function isConversationOpen(w: ConversationWindow, at: number): boolean {
  return at >= w.openedAt && at < w.expiresAt;
}

/** The character count a message object reports in its row (`length`): the text of TEXT bodies, else 0. */
export function rcsBodyLength(body: RcsBody): number {
  return body.type === 'TEXT' ? characterCount(body.text) : 0;
}
