/**
 * A response body that is already JSON text (from a cache): the binder sends
 * it as is, and in test mode still checks it against the operation's schema.
 */
export class RawJson {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
}
