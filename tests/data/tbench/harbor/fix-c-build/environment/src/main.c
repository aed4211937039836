#include <stdio.h>
#include <stdlib.h>
#include "util.h"

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: calc A B\n");
        return 2;
    }
    printf("%ld\n", add(atol(argv[1]), atol(argv[2])));
    return 0;
}
