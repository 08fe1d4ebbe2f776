import type { Db } from './db.ts';

export interface VoiceAudio {
  messageId: string;
  wav: Buffer;
  durationMs: number;
}

export async function insertVoiceAudio(db: Db, audio: VoiceAudio, now: number): Promise<void> {
  await db.insertInto('voice_audio').values({ message_id: audio.messageId, wav: audio.wav, duration_ms: audio.durationMs, created_at: now }).execute();
}

export async function findVoiceAudio(db: Db, messageId: string): Promise<VoiceAudio | null> {
  const r = await db.selectFrom('voice_audio').selectAll().where('message_id', '=', messageId).executeTakeFirst();
  return r ? { messageId: r.message_id, wav: Buffer.from(r.wav), durationMs: Number(r.duration_ms) } : null;
}
