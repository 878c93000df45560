// The image IDs the simulator reports for nginx images declared without a digest (their digest is
// the sha256 of the normalized name: src/sim/images.ts defaultDigest), as both backends report them.
import { defaultDigest } from '../../../src/sim/images.js';

/** `status.containerStatuses[].imageID` of a container running `nginx:<tag>`. */
export const nginxImageID = (tag: string): string =>
  `docker.io/library/nginx@${defaultDigest(`docker.io/library/nginx:${tag}`)}`;

/** The default world's image (nginx:1.14.2) and the usual target (nginx:1.25.3). */
export const OLD_ID = nginxImageID('1.14.2');
export const NEW_ID = nginxImageID('1.25.3');
