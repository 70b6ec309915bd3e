import { profileTop } from '/work/scale/bench/lib/cpu-profile.ts';
const lines = profileTop(process.argv[2], 400);
const i = lines.indexOf('total (self and callees):');
for (const l of lines.slice(i)) if (/daemon\/|src\/|prom-client|garbage|pino|JSON|stringify|formatDate/.test(l)) console.log(l);
