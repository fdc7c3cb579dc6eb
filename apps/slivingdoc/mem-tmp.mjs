import v8 from 'node:v8';
if (process.argv[2]) v8.setFlagsFromString(process.argv[2]);
await import(process.argv[3]);
await new Promise(r=>setTimeout(r,500));
const u = process.memoryUsage();
console.log(process.argv[2], 'rss', (u.rss/1048576).toFixed(1), 'heapTotal', (u.heapTotal/1048576).toFixed(1), 'heapUsed', (u.heapUsed/1048576).toFixed(1));
