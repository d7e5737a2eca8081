from argparse import ArgumentParser as FlexibleArgumentParser

__all__ = ["FlexibleArgumentParser"]
