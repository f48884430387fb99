"""Convolutional vision architectures built from code with random weights (reduced widths
and depths, small images): ResNet-18, MobileNetV2, MobileNetV3-small, EfficientNet-B0,
ConvNeXt and a U-Net. Each has a static case and a dynamic-batch case."""

import torch
from torch import nn


def batch_dim():
    """Made when a test runs: torch.export costs 0.7 s to import during collection."""
    return torch.export.Dim("batch", min=1, max=4)


def _image(batch=1, size=64):
    return torch.randn(batch, 3, size, size)


def _make_divisible(value, divisor=8):
    new = max(divisor, int(value + divisor / 2) // divisor * divisor)
    return new + divisor if new < 0.9 * value else new


def _conv_bn(cin, cout, kernel, stride=1, groups=1, act=nn.ReLU):
    layers = [nn.Conv2d(cin, cout, kernel, stride, kernel // 2, groups=groups, bias=False),
              nn.BatchNorm2d(cout)]
    if act is not None:
        layers.append(act())
    return nn.Sequential(*layers)


# --- ResNet-18: BasicBlocks [2, 2, 2, 2], widths 16-128 ---

class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = _conv_bn(cin, cout, 3, stride)
        self.conv2 = _conv_bn(cout, cout, 3, act=None)
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = _conv_bn(cin, cout, 1, stride, act=None)

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        return torch.relu(self.conv2(self.conv1(x)) + identity)


class ResNet18(nn.Module):
    def __init__(self, widths=(16, 32, 64, 128), num_classes=10):
        super().__init__()
        self.stem = nn.Sequential(_conv_bn(3, widths[0], 7, 2), nn.MaxPool2d(3, 2, 1))
        blocks, cin = [], widths[0]
        for stage, width in enumerate(widths):
            for index in range(2):
                stride = 2 if stage > 0 and index == 0 else 1
                blocks.append(BasicBlock(cin, width, stride))
                cin = width
        self.blocks = nn.Sequential(*blocks)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(cin, num_classes)

    def forward(self, x):
        return self.fc(torch.flatten(self.pool(self.blocks(self.stem(x))), 1))


# --- MobileNetV2: inverted residuals with linear bottlenecks, ReLU6 ---

class InvertedResidual(nn.Module):
    def __init__(self, cin, cout, stride, expand):
        super().__init__()
        hidden = cin * expand
        layers = [] if expand == 1 else [_conv_bn(cin, hidden, 1, act=nn.ReLU6)]
        layers += [_conv_bn(hidden, hidden, 3, stride, groups=hidden, act=nn.ReLU6),
                   _conv_bn(hidden, cout, 1, act=None)]
        self.block = nn.Sequential(*layers)
        self.residual = stride == 1 and cin == cout

    def forward(self, x):
        return x + self.block(x) if self.residual else self.block(x)


class MobileNetV2(nn.Module):
    # (expand, channels, repeats, stride): the original table at width 0.5, one fewer repeat
    SETTINGS = [(1, 8, 1, 1), (6, 12, 2, 2), (6, 16, 2, 2), (6, 32, 2, 2),
                (6, 48, 2, 1), (6, 80, 2, 2), (6, 160, 1, 1)]

    def __init__(self, num_classes=10):
        super().__init__()
        layers, cin = [_conv_bn(3, 16, 3, 2, act=nn.ReLU6)], 16
        for expand, cout, repeats, stride in self.SETTINGS:
            for index in range(repeats):
                layers.append(InvertedResidual(cin, cout, stride if index == 0 else 1, expand))
                cin = cout
        layers.append(_conv_bn(cin, 320, 1, act=nn.ReLU6))
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(320, num_classes))

    def forward(self, x):
        return self.classifier(self.features(x).mean(dim=(2, 3)))


# --- MobileNetV3-small: hardswish, hardsigmoid squeeze-excite ---

class SqueezeExcite(nn.Module):
    def __init__(self, channels, squeeze, gate=nn.Hardsigmoid, act=nn.ReLU):
        super().__init__()
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.reduce = nn.Conv2d(channels, squeeze, 1)
        self.act = act()
        self.expand = nn.Conv2d(squeeze, channels, 1)
        self.gate = gate()

    def forward(self, x):
        return x * self.gate(self.expand(self.act(self.reduce(self.pool(x)))))


class MobileNetV3Block(nn.Module):
    def __init__(self, cin, kernel, hidden, cout, use_se, act, stride):
        super().__init__()
        layers = [] if hidden == cin else [_conv_bn(cin, hidden, 1, act=act)]
        layers.append(_conv_bn(hidden, hidden, kernel, stride, groups=hidden, act=act))
        if use_se:
            layers.append(SqueezeExcite(hidden, _make_divisible(hidden // 4)))
        layers.append(_conv_bn(hidden, cout, 1, act=None))
        self.block = nn.Sequential(*layers)
        self.residual = stride == 1 and cin == cout

    def forward(self, x):
        return x + self.block(x) if self.residual else self.block(x)


class MobileNetV3Small(nn.Module):
    # (kernel, expanded, out, SE, activation, stride): the torchvision table at width 0.5
    SETTINGS = [
        (3, 16, 8, True, nn.ReLU, 2), (3, 40, 16, False, nn.ReLU, 2),
        (3, 48, 16, False, nn.ReLU, 1), (5, 48, 24, True, nn.Hardswish, 2),
        (5, 120, 24, True, nn.Hardswish, 1), (5, 120, 24, True, nn.Hardswish, 1),
        (5, 64, 24, True, nn.Hardswish, 1), (5, 72, 24, True, nn.Hardswish, 1),
        (5, 144, 48, True, nn.Hardswish, 2), (5, 288, 48, True, nn.Hardswish, 1),
        (5, 288, 48, True, nn.Hardswish, 1),
    ]

    def __init__(self, num_classes=10):
        super().__init__()
        layers, cin = [_conv_bn(3, 16, 3, 2, act=nn.Hardswish)], 16
        for kernel, hidden, cout, use_se, act, stride in self.SETTINGS:
            layers.append(MobileNetV3Block(cin, kernel, hidden, cout, use_se, act, stride))
            cin = cout
        layers.append(_conv_bn(cin, 288, 1, act=nn.Hardswish))
        self.features = nn.Sequential(*layers)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Sequential(
            nn.Linear(288, 512), nn.Hardswish(), nn.Dropout(0.2), nn.Linear(512, num_classes))

    def forward(self, x):
        return self.classifier(torch.flatten(self.pool(self.features(x)), 1))


# --- EfficientNet-B0: MBConv with SiLU and sigmoid SE; widths halved, one block per stage ---

class MBConv(nn.Module):
    def __init__(self, cin, cout, kernel, stride, expand):
        super().__init__()
        hidden = cin * expand
        layers = [] if expand == 1 else [_conv_bn(cin, hidden, 1, act=nn.SiLU)]
        layers += [
            _conv_bn(hidden, hidden, kernel, stride, groups=hidden, act=nn.SiLU),
            SqueezeExcite(hidden, max(1, cin // 4), gate=nn.Sigmoid, act=nn.SiLU),
            _conv_bn(hidden, cout, 1, act=None),
        ]
        self.block = nn.Sequential(*layers)
        self.residual = stride == 1 and cin == cout

    def forward(self, x):
        return x + self.block(x) if self.residual else self.block(x)


class EfficientNetB0(nn.Module):
    # (expand, kernel, stride, out, repeats): B0's table at width 0.5, depth reduced
    SETTINGS = [(1, 3, 1, 8, 1), (6, 3, 2, 12, 2), (6, 5, 2, 20, 2), (6, 3, 2, 40, 1),
                (6, 5, 1, 56, 1), (6, 5, 2, 96, 2), (6, 3, 1, 160, 1)]

    def __init__(self, num_classes=10):
        super().__init__()
        layers, cin = [_conv_bn(3, 16, 3, 2, act=nn.SiLU)], 16
        for expand, kernel, stride, cout, repeats in self.SETTINGS:
            for index in range(repeats):
                layers.append(MBConv(cin, cout, kernel, stride if index == 0 else 1, expand))
                cin = cout
        layers.append(_conv_bn(cin, 640, 1, act=nn.SiLU))
        self.features = nn.Sequential(*layers)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(640, num_classes))

    def forward(self, x):
        return self.classifier(torch.flatten(self.pool(self.features(x)), 1))


# --- ConvNeXt: depthwise 7x7, channels-last LayerNorm, GELU MLP, layer scale ---

class LayerNorm2d(nn.LayerNorm):
    """LayerNorm over channels of an NCHW tensor (permute to channels-last and back)."""

    def forward(self, x):
        return super().forward(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)


class ConvNeXtBlock(nn.Module):
    def __init__(self, dim, layer_scale=1e-6):
        super().__init__()
        self.dwconv = nn.Conv2d(dim, dim, 7, padding=3, groups=dim)
        self.norm = nn.LayerNorm(dim, eps=1e-6)
        self.pwconv1 = nn.Linear(dim, 4 * dim)
        self.act = nn.GELU()
        self.pwconv2 = nn.Linear(4 * dim, dim)
        # Layer scale starts at 1e-6 in ConvNeXt; larger here so the branch shows in the output.
        self.gamma = nn.Parameter(torch.full((dim,), layer_scale) + 0.5 * torch.rand(dim))

    def forward(self, x):
        y = self.dwconv(x).permute(0, 2, 3, 1)
        y = self.gamma * self.pwconv2(self.act(self.pwconv1(self.norm(y))))
        return x + y.permute(0, 3, 1, 2)


class ConvNeXt(nn.Module):
    def __init__(self, depths=(1, 1, 2, 1), dims=(16, 32, 64, 128), num_classes=10):
        super().__init__()
        layers = [nn.Conv2d(3, dims[0], 4, stride=4), LayerNorm2d(dims[0], eps=1e-6)]
        for stage, (depth, dim) in enumerate(zip(depths, dims, strict=True)):
            if stage > 0:
                layers += [LayerNorm2d(dims[stage - 1], eps=1e-6),
                           nn.Conv2d(dims[stage - 1], dim, 2, stride=2)]
            layers += [ConvNeXtBlock(dim) for _ in range(depth)]
        self.features = nn.Sequential(*layers)
        self.norm = nn.LayerNorm(dims[-1], eps=1e-6)
        self.head = nn.Linear(dims[-1], num_classes)

    def forward(self, x):
        return self.head(self.norm(self.features(x).mean(dim=(2, 3))))


# --- U-Net: conv blocks, max-pool down, ConvTranspose up, skip concatenation ---

class DoubleConv(nn.Sequential):
    def __init__(self, cin, cout):
        super().__init__(_conv_bn(cin, cout, 3), _conv_bn(cout, cout, 3))


class UNet(nn.Module):
    def __init__(self, channels=(8, 16, 32, 64), num_classes=2):
        super().__init__()
        self.down = nn.ModuleList()
        cin = 3
        for width in channels:
            self.down.append(DoubleConv(cin, width))
            cin = width
        self.pool = nn.MaxPool2d(2)
        self.bottleneck = DoubleConv(channels[-1], 2 * channels[-1])
        self.up = nn.ModuleList()
        self.up_conv = nn.ModuleList()
        cin = 2 * channels[-1]
        for width in reversed(channels):
            self.up.append(nn.ConvTranspose2d(cin, width, 2, stride=2))
            self.up_conv.append(DoubleConv(2 * width, width))
            cin = width
        self.head = nn.Conv2d(channels[0], num_classes, 1)

    def forward(self, x):
        skips = []
        for block in self.down:
            x = block(x)
            skips.append(x)
            x = self.pool(x)
        x = self.bottleneck(x)
        for up, conv, skip in zip(self.up, self.up_conv, reversed(skips), strict=True):
            x = conv(torch.cat([up(x), skip], dim=1))
        return self.head(x)


def _randomize_bn(model):
    """Random running statistics and affine terms, so BatchNorm is not an identity."""
    for module in model.modules():
        if isinstance(module, nn.BatchNorm2d):
            with torch.no_grad():
                module.running_mean.uniform_(-0.1, 0.1)
                module.running_var.uniform_(0.5, 1.5)
                module.weight.uniform_(0.5, 1.5)
                module.bias.uniform_(-0.1, 0.1)
    return model


def test_resnet18(test_runner):
    test_runner.lower_and_run_model(_randomize_bn(ResNet18()), (_image(),))


def test_resnet18_dynamic_batch(test_runner):
    test_runner.lower_and_run_model(_randomize_bn(ResNet18()), (_image(2),),
                                    dynamic_shapes=({0: batch_dim()},))


def test_mobilenet_v2(test_runner):
    test_runner.lower_and_run_model(_randomize_bn(MobileNetV2()), (_image(),))


def test_mobilenet_v2_dynamic_batch(test_runner):
    test_runner.lower_and_run_model(_randomize_bn(MobileNetV2()), (_image(2),),
                                    dynamic_shapes=({0: batch_dim()},))


def test_mobilenet_v3_small(test_runner):
    test_runner.lower_and_run_model(_randomize_bn(MobileNetV3Small()), (_image(),))


def test_mobilenet_v3_small_dynamic_batch(test_runner):
    test_runner.lower_and_run_model(_randomize_bn(MobileNetV3Small()), (_image(2),),
                                    dynamic_shapes=({0: batch_dim()},))


def test_efficientnet_b0(test_runner):
    test_runner.lower_and_run_model(_randomize_bn(EfficientNetB0()), (_image(),))


def test_efficientnet_b0_dynamic_batch(test_runner):
    test_runner.lower_and_run_model(_randomize_bn(EfficientNetB0()), (_image(2),),
                                    dynamic_shapes=({0: batch_dim()},))


def test_convnext(test_runner):
    test_runner.lower_and_run_model(ConvNeXt(), (_image(),))


def test_convnext_dynamic_batch(test_runner):
    test_runner.lower_and_run_model(ConvNeXt(), (_image(2),), dynamic_shapes=({0: batch_dim()},))


def test_unet(test_runner):
    test_runner.lower_and_run_model(_randomize_bn(UNet()), (_image(),))


def test_unet_dynamic_batch(test_runner):
    test_runner.lower_and_run_model(_randomize_bn(UNet()), (_image(2),),
                                    dynamic_shapes=({0: batch_dim()},))
