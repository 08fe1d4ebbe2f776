// Types of the untyped packages the speech engines load.
declare module '@echogarden/espeak-ng-emscripten' {
  const init: (options?: object) => Promise<{ eSpeakNGWorker: new () => unknown }>;
  export default init;
}
