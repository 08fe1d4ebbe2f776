/**
 * Message templates: a text with `{{name}}` placeholders, each with an optional default (`{{name|there}}`), filled in
 * per recipient. A name is a letter or `_` then letters, digits or `_`; spaces around it are allowed. `\{{` is a
 * literal `{{`. A value is put in as it is (a `{{` inside a value is never read as a placeholder).
 */

export const MAX_TEMPLATE_VARIABLES = 50;
const NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

export type TemplatePiece = string | { name: string; default?: string };

export interface ParsedTemplate {
  pieces: TemplatePiece[];
  /** The names it uses, in order of first use. */
  variables: string[];
}

export class TemplateError extends Error {
  constructor(
    message: string,
    /** The variable concerned, when there is one. */
    readonly variable?: string,
  ) {
    super(message);
    this.name = 'TemplateError';
  }
}

/**
 * The pieces of a template's text. A placeholder that is not closed, has no valid name, or (when `declared` is given)
 * names a variable not declared is refused.
 */
export function parseTemplate(text: string, declared?: readonly string[]): ParsedTemplate {
  const pieces: TemplatePiece[] = [];
  const variables: string[] = [];
  let literal = '';
  let i = 0;
  while (i < text.length) {
    if (text.startsWith('\\{{', i)) {
      literal += '{{';
      i += 3;
      continue;
    }
    if (!text.startsWith('{{', i)) {
      literal += text[i];
      i++;
      continue;
    }
    const end = text.indexOf('}}', i + 2);
    if (end < 0) throw new TemplateError(`a placeholder opened at character ${i + 1} is not closed with }}`);
    const inner = text.slice(i + 2, end);
    if (inner.includes('{{')) throw new TemplateError(`a placeholder opened at character ${i + 1} is not closed with }}`);
    const bar = inner.indexOf('|');
    const name = (bar < 0 ? inner : inner.slice(0, bar)).trim();
    if (!NAME.test(name)) {
      throw new TemplateError(`{{${inner}}} is not a variable: a name is a letter or _ then letters, digits or _ (at most 64)`);
    }
    if (declared && !declared.includes(name)) {
      throw new TemplateError(`{{${name}}} is not one of the declared variables (${declared.join(', ') || 'none'})`, name);
    }
    if (literal) pieces.push(literal);
    literal = '';
    pieces.push(bar < 0 ? { name } : { name, default: inner.slice(bar + 1) });
    if (!variables.includes(name)) variables.push(name);
    i = end + 2;
  }
  if (literal) pieces.push(literal);
  if (variables.length > MAX_TEMPLATE_VARIABLES) throw new TemplateError(`at most ${MAX_TEMPLATE_VARIABLES} variables`);
  return { pieces, variables };
}

/**
 * The text for one recipient: each placeholder replaced by its value, else its default. A variable with neither is
 * refused; so is, with `strict`, a value for a variable the template does not use (a campaign file's other columns
 * are not).
 */
export function renderTemplate(template: ParsedTemplate, values: Readonly<Record<string, string>>, strict = true): string {
  for (const name of strict ? Object.keys(values) : []) {
    if (!template.variables.includes(name)) {
      throw new TemplateError(`the template has no variable ${name} (it has ${template.variables.join(', ') || 'none'})`, name);
    }
  }
  let out = '';
  for (const piece of template.pieces) {
    if (typeof piece === 'string') {
      out += piece;
      continue;
    }
    const value = Object.hasOwn(values, piece.name) ? values[piece.name] : piece.default;
    if (value === undefined) throw new TemplateError(`no value for the variable ${piece.name}, which has no default`, piece.name);
    out += value;
  }
  return out;
}
