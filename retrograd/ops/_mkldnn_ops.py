"""What PyTorch does with each op on MKL-DNN tensors (Note [The MKL-DNN layout] in ops/mkldnn.py): written by
scripts/mkldnn_op_table.py, empty until it has run; an op not listed runs as on a strided tensor."""
MKLDNN_OPS = {}
