mod concurrency;
