import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readAloud, spellCode } from '../../../src/core/voice/reading.ts';

test('codes are spelled in groups of three, never leaving one character alone', () => {
  assert.equal(spellCode('482913'), '4, 8, 2. 9, 1, 3');
  assert.equal(spellCode('4829'), '4, 8. 2, 9');
  assert.equal(spellCode('1234567'), '1, 2, 3. 4, 5. 6, 7');
  assert.equal(spellCode('12345'), '1, 2, 3. 4, 5');
  assert.equal(spellCode('AB12CD'), 'A, B, 1. 2, C, D');
});

test('an OTP is read digit by digit with pauses, in every language', () => {
  assert.equal(readAloud('Votre code est 482913.', 'fr-FR'), 'Votre code est 4, 8, 2. 9, 1, 3.');
  assert.equal(readAloud('Your code is 482913', 'en-GB'), 'Your code is 4, 8, 2. 9, 1, 3');
  assert.equal(readAloud('Ihr Code lautet 482913, danke', 'de-DE'), 'Ihr Code lautet 4, 8, 2. 9, 1, 3, danke');
  assert.equal(readAloud('Su código es 482913 gracias', 'es-ES'), 'Su código es 4, 8, 2. 9, 1, 3, gracias');
  assert.equal(readAloud('Il codice 482913', 'it-IT'), 'Il codice 4, 8, 2. 9, 1, 3');
  assert.equal(readAloud('O código é 482913', 'pt-PT'), 'O código é 4, 8, 2. 9, 1, 3');
  assert.equal(readAloud('Uw code is 482913', 'nl-NL'), 'Uw code is 4, 8, 2. 9, 1, 3');
});

test('short numbers are codes only after a code word; written in groups they are read as one code', () => {
  assert.equal(readAloud('Votre code : 4829', 'fr-FR'), 'Votre code : 4, 8. 2, 9');
  assert.equal(readAloud('PIN 123', 'en-GB'), 'PIN 1, 2, 3');
  assert.equal(readAloud('Uw pincode is 1234 vandaag', 'nl-NL'), 'Uw pincode is 1, 2. 3, 4, vandaag');
  assert.equal(readAloud('Ihr Code lautet 123 456', 'de-DE'), 'Ihr Code lautet 1, 2, 3. 4, 5, 6');
  assert.equal(readAloud('Il reste 2 places pour 1250 personnes en 2024', 'fr-FR'), 'Il reste 2 places pour 1250 personnes en 2024');
  assert.equal(readAloud('Total 1.250,50 €, soit 12,5 %', 'fr-FR'), 'Total 1.250,50 €, soit 12,5 %');
  assert.equal(readAloud('Encodage 3 de 10 messages', 'fr-FR'), 'Encodage 3 de 10 messages', '"code" inside a word is no code word');
  // A reference mixing letters and digits is spelled; plain words and numbers are not.
  assert.equal(readAloud('Ref AB12CD ok, ABC and 123', 'en-GB'), 'Ref A, B, 1. 2, C, D, ok, ABC and 123');
  // Long numbers (phone numbers) too; spaced pairs as French speak them are left alone.
  assert.equal(readAloud('Appelez le 0612345678', 'fr-FR'), 'Appelez le 0, 6, 1. 2, 3, 4. 5, 6. 7, 8');
  assert.equal(readAloud('Appelez le 06 12 34 56 78', 'fr-FR'), 'Appelez le 06 12 34 56 78');
});

test('dates are read with the name of the month, the way each language says them', () => {
  const cases: Array<[string, Parameters<typeof readAloud>[1], string]> = [
    ['le 15/03/2025', 'fr-FR', 'le 15 mars 2025'],
    ['le 01/03/2025', 'fr-FR', 'le 1er mars 2025'],
    ['on 2025-03-01', 'en-GB', 'on 1st of March 2025'],
    ['on 22.11.2025', 'en-GB', 'on 22nd of November 2025'],
    ['am 3.10.2025', 'de-DE', 'am 3. Oktober 2025'],
    ['el 15/03/2025', 'es-ES', 'el 15 de marzo de 2025'],
    ['il 1/5/2025', 'it-IT', 'il primo maggio 2025'],
    ['a 2025-12-25', 'pt-PT', 'a 25 de dezembro de 2025'],
    ['op 1-2-2025', 'nl-NL', 'op 1 februari 2025'],
  ];
  for (const [text, language, spoken] of cases) assert.equal(readAloud(text, language), spoken, `${language}: ${text}`);
  assert.equal(readAloud('le 31/02/2025', 'fr-FR'), 'le 31/02/2025', 'no such day: left as written');
  assert.equal(readAloud('le 15/13/2025', 'fr-FR'), 'le 15/13/2025');
});

test('times are read with the language’s word for the hour', () => {
  assert.equal(readAloud('à 14h30', 'fr-FR'), 'à 14 heures 30');
  assert.equal(readAloud('à 9:00', 'fr-FR'), 'à 9 heures');
  assert.equal(readAloud('at 9:05', 'en-GB'), 'at 9 oh 5');
  assert.equal(readAloud('at 18:00', 'en-GB'), "at 18 o'clock");
  assert.equal(readAloud('um 14:30', 'de-DE'), 'um 14 Uhr 30');
  assert.equal(readAloud('a las 18:00', 'es-ES'), 'a las 18 horas');
  assert.equal(readAloud('alle 8:15', 'it-IT'), 'alle 8 e 15');
  assert.equal(readAloud('às 8:15', 'pt-PT'), 'às 8 horas e 15');
  assert.equal(readAloud('om 8:15', 'nl-NL'), 'om 8 uur 15');
  assert.equal(readAloud('score 25:61', 'en-GB'), 'score 25:61', 'not a time');
});
