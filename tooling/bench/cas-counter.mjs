// Preloaded (node --import) into each `slivingdoc serve` process the benchmark starts, to count
// compare-and-swap attempts on `current` without touching product code: the embedded store
// publishes every version of `current` with link(2) into `<prefix>/current/`, and the S3 store
// sends every conditional write as a PUT of `…/current` with If-Match or If-None-Match. Each
// attempt appends one byte to $SLIVINGDOC_BENCH_CAS_FILE; the harness reads the file sizes.
import fs from 'node:fs';
import http from 'node:http';
import { syncBuiltinESMExports } from 'node:module';
import path from 'node:path';

const file = process.env.SLIVINGDOC_BENCH_CAS_FILE;
if (file) {
  const count = () => fs.appendFileSync(file, '.');
  const link = fs.promises.link;
  fs.promises.link = function countedLink(existing, target) {
    if (path.basename(path.dirname(String(target))) === 'current') count();
    return link.call(this, existing, target);
  };
  const request = http.request;
  http.request = function countedRequest(...args) {
    const options = args.find((a) => a && typeof a === 'object' && !(a instanceof URL));
    const headers = options?.headers ?? {};
    if (
      options?.method === 'PUT' &&
      /\/current(\?|$)/.test(options.path ?? '') &&
      Object.keys(headers).some((h) => /^if-(none-)?match$/i.test(h))
    ) {
      count();
    }
    return request.apply(this, args);
  };
  syncBuiltinESMExports();
}
