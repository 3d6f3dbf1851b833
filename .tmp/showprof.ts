import { renderProfile, summariseProfiles } from '../bench/profile';
for (const p of summariseProfiles(process.argv[2]!)) console.log(renderProfile({ ...p, topFunctions: p.topFunctions.slice(0, 25) }));
