long add(long a, long b);
