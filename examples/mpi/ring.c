// Passes a message of SIZE bytes around all ranks ROUNDS times and prints,
// on rank 0, the time per hop. With FAIL_RANK, that rank exits 3 before
// the first message, as a crashing rank would.
//   mpirun ./ring SIZE ROUNDS [FAIL_RANK]
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc < 3) {
    if (rank == 0) fprintf(stderr, "usage: ring SIZE ROUNDS [FAIL_RANK]\n");
    MPI_Finalize();
    return 2;
  }
  int bytes = atoi(argv[1]), rounds = atoi(argv[2]);
  int fail_rank = argc > 3 ? atoi(argv[3]) : -1;
  char host[256] = "";
  gethostname(host, sizeof host - 1);
  printf("rank %d of %d on %s\n", rank, size, host);
  fflush(stdout);
  if (rank == fail_rank) {
    fprintf(stderr, "rank %d on %s: failing on purpose\n", rank, host);
    exit(3);
  }

  char* message = calloc(bytes > 0 ? bytes : 1, 1);
  int next = (rank + 1) % size, previous = (rank + size - 1) % size;
  MPI_Barrier(MPI_COMM_WORLD);
  double start = MPI_Wtime();
  for (int round = 0; round < rounds; ++round) {
    if (rank == 0) {
      MPI_Send(message, bytes, MPI_CHAR, next, 0, MPI_COMM_WORLD);
      MPI_Recv(message, bytes, MPI_CHAR, previous, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(message, bytes, MPI_CHAR, previous, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(message, bytes, MPI_CHAR, next, 0, MPI_COMM_WORLD);
    }
  }
  double seconds = MPI_Wtime() - start;
  if (rank == 0)
    printf("ring: %d ranks, %d bytes, %.2f us per hop\n", size, bytes,
           seconds * 1e6 / ((double)rounds * size));
  free(message);
  MPI_Finalize();
  return 0;
}
