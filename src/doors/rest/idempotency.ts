import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../../core/services.ts';
import { requestFingerprint } from '../../core/idempotency.ts';
import { omitNulls } from '../../domain/absent.ts';
import type { PreparedMessage } from '../../core/messaging/accept.ts';
import { messageObject } from '../../core/messaging/view.ts';
import type { Channel } from '../../core/types.ts';
import { fail } from '../../core/errors.ts';
import { baseUrl } from './access.ts';

export const IDEMPOTENCY_HEADER = 'idempotency-key';

const KEY_RE = /^[\x21-\x7e]{1,255}$/;

/** The Idempotency-Key header's value checked (1–255 visible ASCII characters), or null when the request has none. */
export function idempotencyKeyOf(header: string | string[] | undefined): string | null {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined) return null;
  if (!KEY_RE.test(value)) fail('INVALID_REQUEST', 'must be 1 to 255 visible ASCII characters', 'header.idempotency-key');
  return value;
}

/**
 * Answers a send with 201 and the message object. With an Idempotency-Key, the key is claimed first and its answer
 * recorded in the accept transaction itself, so a retry either replays the stored answer or runs again — it never
 * creates a second message.
 */
export async function answerSend(
  services: Services,
  req: FastifyRequest,
  reply: FastifyReply,
  scope: string,
  channel: Channel,
  sendOnce: (afterInsert?: PreparedMessage['afterInsert']) => Promise<unknown>,
): Promise<FastifyReply> {
  const key = idempotencyKeyOf(req.headers[IDEMPOTENCY_HEADER]);
  if (key === null) return reply.code(201).send(await sendOnce());
  const idem = { scope: `${scope}:${channel.id}`, key, fingerprint: requestFingerprint(req.body) };
  const claim = await services.idempotency.claim(idem);
  // An answer recorded by an older version may hold nulls.
  if (claim.state === 'replay') return reply.code(claim.answer.statusCode).header('idempotent-replayed', 'true').send(omitNulls(claim.answer.body));
  try {
    const base = baseUrl(services, req);
    return reply
      .code(201)
      .send(
        await sendOnce((tx, row) => services.idempotency.complete(tx, idem, claim.claimedAt, { statusCode: 201, body: messageObject(row, channel, base) })),
      );
  } catch (err) {
    await services.idempotency.release(idem, claim.claimedAt);
    throw err;
  }
}
