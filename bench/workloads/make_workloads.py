#!/usr/bin/python3
"""Writes the gradient-tensor workloads of bench/train (one file per model, in this folder).

Each file lists a model's parameter tensors in backward order (the order their gradients are
ready during backprop: the reverse of the order the model registers them), one per line:
"<element count> <parameter name>". Lines starting with '#' say where the list comes from.

  resnet50.txt    torchvision.models.resnet50() (torchvision 0.14, Debian's python3-torchvision):
                  161 tensors, 25,557,032 parameters
  alexnet.txt     torchvision.models.alexnet(): 16 tensors, 61,100,840 parameters
  bert_base.txt   BERT-base (Devlin et al. 2019, the bert-base-uncased configuration: hidden
                  768, 12 layers, intermediate 3072, vocabulary 30522, 512 positions, 2 token
                  types), parameters named and shaped as Hugging Face's BertModel: 199 tensors,
                  109,482,240 parameters

Run with Debian's interpreter: /usr/bin/python3 bench/workloads/make_workloads.py
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def write(name, source, params):
    total = sum(n for _, n in params)
    path = os.path.join(HERE, name)
    with open(path, "w") as f:
        f.write("# %s\n" % source)
        f.write("# %d tensors, %d parameters, in backward order (reverse of registration)\n"
                % (len(params), total))
        for pname, n in reversed(params):
            f.write("%d %s\n" % (n, pname))
    print("%s: %d tensors, %d parameters" % (path, len(params), total))


def torchvision_model(fn):
    import torchvision  # noqa: imported here so the BERT list needs no torch
    model = getattr(torchvision.models, fn)()
    return [(n, p.numel()) for n, p in model.named_parameters()]


def bert_base(hidden=768, layers=12, inter=3072, vocab=30522, positions=512, types=2):
    p = [("embeddings.word_embeddings.weight", vocab * hidden),
         ("embeddings.position_embeddings.weight", positions * hidden),
         ("embeddings.token_type_embeddings.weight", types * hidden),
         ("embeddings.LayerNorm.weight", hidden), ("embeddings.LayerNorm.bias", hidden)]
    for i in range(layers):
        pre = "encoder.layer.%d." % i
        for proj in ("query", "key", "value"):
            p += [(pre + "attention.self.%s.weight" % proj, hidden * hidden),
                  (pre + "attention.self.%s.bias" % proj, hidden)]
        p += [(pre + "attention.output.dense.weight", hidden * hidden),
              (pre + "attention.output.dense.bias", hidden),
              (pre + "attention.output.LayerNorm.weight", hidden),
              (pre + "attention.output.LayerNorm.bias", hidden),
              (pre + "intermediate.dense.weight", hidden * inter),
              (pre + "intermediate.dense.bias", inter),
              (pre + "output.dense.weight", inter * hidden),
              (pre + "output.dense.bias", hidden),
              (pre + "output.LayerNorm.weight", hidden),
              (pre + "output.LayerNorm.bias", hidden)]
    p += [("pooler.dense.weight", hidden * hidden), ("pooler.dense.bias", hidden)]
    return p


def main():
    write("resnet50.txt", "torchvision.models.resnet50() (torchvision 0.14)",
          torchvision_model("resnet50"))
    write("alexnet.txt", "torchvision.models.alexnet() (torchvision 0.14)",
          torchvision_model("alexnet"))
    bert = bert_base()
    if sum(n for _, n in bert) != 109482240:
        sys.exit("BERT-base parameter count is off")
    write("bert_base.txt", "BERT-base (bert-base-uncased configuration), Hugging Face BertModel "
          "parameter names and shapes", bert)


if __name__ == "__main__":
    main()
