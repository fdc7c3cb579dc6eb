// A module of its own so the bundler puts the S3 store, and the AWS SDK it imports, in a
// chunk that only a configured bucket loads (see openStore).
export { createS3Store } from '@slivingdoc/store';
