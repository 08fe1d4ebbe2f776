/** A setting refused at start: `setting` is named as the user wrote it, with the configuration file it is in, if any. */
export class ConfigError extends Error {
  constructor(
    readonly setting: string,
    message: string,
    readonly file?: string,
  ) {
    super(`invalid setting ${setting}${file === undefined ? '' : ` in ${file}`}: ${message}`);
    this.name = 'ConfigError';
  }
}
