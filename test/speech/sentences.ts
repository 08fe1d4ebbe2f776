import type { VoiceLanguage } from '../../src/core/voice/tts.ts';

/** A short and a long sentence in each language, for the engines' tests. */
export const SENTENCES: Record<VoiceLanguage, { short: string; long: string }> = {
  'fr-FR': {
    short: 'Bonjour, votre code est prêt.',
    long: 'Bonjour, ceci est un message vocal de votre banque. Votre code de confirmation est quatre, deux, sept, neuf. Merci et bonne journée.',
  },
  'en-GB': {
    short: 'Hello, your code is ready.',
    long: 'Hello, this is a voice message from your bank. Your confirmation code is four, two, seven, nine. Thank you and have a good day.',
  },
  'de-DE': {
    short: 'Hallo, Ihr Code ist bereit.',
    long: 'Hallo, dies ist eine Sprachnachricht Ihrer Bank. Ihr Bestätigungscode lautet vier, zwei, sieben, neun. Vielen Dank und einen schönen Tag.',
  },
  'es-ES': {
    short: 'Hola, su código está listo.',
    long: 'Hola, este es un mensaje de voz de su banco. Su código de confirmación es cuatro, dos, siete, nueve. Gracias y que tenga un buen día.',
  },
  'it-IT': {
    short: 'Buongiorno, il suo codice è pronto.',
    long: 'Buongiorno, questo è un messaggio vocale della sua banca. Il suo codice di conferma è quattro, due, sette, nove. Grazie e buona giornata.',
  },
  'pt-PT': {
    short: 'Olá, o seu código está pronto.',
    long: 'Olá, esta é uma mensagem de voz do seu banco. O seu código de confirmação é quatro, dois, sete, nove. Obrigado e tenha um bom dia.',
  },
  'nl-NL': {
    short: 'Hallo, uw code is klaar.',
    long: 'Hallo, dit is een spraakbericht van uw bank. Uw bevestigingscode is vier, twee, zeven, negen. Dank u wel en een fijne dag.',
  },
};
