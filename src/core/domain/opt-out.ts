const STOP_WORDS = new Set(['STOP', 'ARRET', 'STOPALL', 'UNSUBSCRIBE', 'STOPSMS', 'DESABONNER', 'DESINSCRIRE']);
const START_WORDS = new Set(['START', 'UNSTOP', 'SUBSCRIBE']);

/**
 * Whether an inbound text is an opt-out (STOP) or opt-in (START) command: the word alone, in any case, with or
 * without accents and surrounding punctuation ("Arrêt", "stop.", " STOP ").
 */
export function optCommand(text: string): 'STOP' | 'START' | null {
  const word = text
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .toUpperCase()
    .replace(/^[\s\p{P}]+|[\s\p{P}]+$/gu, '');
  if (STOP_WORDS.has(word)) return 'STOP';
  if (START_WORDS.has(word)) return 'START';
  return null;
}
